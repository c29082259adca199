import Foundation
import PackagePlugin

/// `swift package validate-authorization-config [FILE ...] [--jwt TOKEN]` runs the authorization doctor
/// (`sdkauth-config`) on the package: with no file, every configuration file in it. It is the alias
/// of `authorization-doctor` (`Plugins/AuthorizationDoctor/plugin.swift`), kept for the verb's
/// existing users; keep the two equal (Scripts/check-doctor runs both).
@main
struct ValidateAuthorizationConfiguration: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        let tool = try context.tool(named: "sdkauth-config")
        let process = Process()
        process.executableURL = tool.url
        // The tool reads relative paths, and looks for files, from the package directory. It is
        // told which SDKAuthorization products the package's targets link (directly or through
        // other targets; test targets left out), so a built-in mode name whose product is not
        // linked is an error, as it is in the app.
        var linked: Set<String> = []
        for target in context.package.targets where (target as? SourceModuleTarget)?.kind != .test {
            for dependency in target.recursiveTargetDependencies where dependency.name.hasPrefix("SDKAuthorization") {
                linked.insert(dependency.name)
            }
        }
        process.arguments = ["--package-directory", context.package.directoryURL.path,
                             "--linked-products", linked.sorted().joined(separator: ",")] + arguments
        try process.run()
        process.waitUntilExit()
        if process.terminationStatus != 0 {
            throw DoctorFailed(status: process.terminationStatus)
        }
    }
}

/// The doctor found errors (status 1) or was called wrongly (status 64); its own output says which.
struct DoctorFailed: Error, CustomStringConvertible {
    let status: Int32
    var description: String {
        status == 64 ? "the authorization doctor was called wrongly (see its usage message)" : "the authorization doctor found errors (see its output)"
    }
}
