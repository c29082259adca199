import Foundation
import PackagePlugin

/// `swift package validate-authorization-config FILE...` checks authorization configuration files
/// with the framework's own reader and prints each file's verdict.
@main
struct ValidateAuthorizationConfiguration: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        let tool = try context.tool(named: "sdkauth-config")
        let files = arguments.map { argument in
            argument.hasPrefix("/") ? argument : context.package.directoryURL.appendingPathComponent(argument).path
        }
        let process = Process()
        process.executableURL = tool.url
        process.arguments = files
        try process.run()
        process.waitUntilExit()
        if process.terminationStatus != 0 {
            Diagnostics.error("some authorization configuration files are invalid")
            throw ExitCode(process.terminationStatus)
        }
    }
}

struct ExitCode: Error, CustomStringConvertible {
    let status: Int32
    init(_ status: Int32) { self.status = status }
    var description: String { "sdkauth-config exited with status \(status)" }
}
