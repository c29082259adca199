import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit

/// `sdkauth-register-providers --manifest FILE --output FILE --module-name NAME`: reads a target's
/// `sdkauth-providers.json` and writes the Swift source that registers its providers.
///
/// Problems are printed to standard error as a compiler prints them
/// (`/path/sdkauth-providers.json:4:5: error: entry "Partner": unknown mode "fatcory"; ...`), so
/// SwiftPM and Xcode show them at the manifest line, and the exit status is 1; a usage error exits 64.
/// The output file is written only when its contents change, so an unchanged manifest rebuilds nothing.
package enum RegisterProvidersCommand {
    package static let usage = "usage: sdkauth-register-providers --manifest <sdkauth-providers.json> --output <file.swift> --module-name <module>"

    /// Runs the command; what it would print to standard error is returned in `errors`.
    package static func run(arguments: [String]) -> (status: Int32, errors: [String]) {
        var options: [String: String] = [:]
        var remaining = arguments[...]
        while let flag = remaining.popFirst() {
            guard ["--manifest", "--output", "--module-name"].contains(flag) else {
                return (64, ["error: unknown argument \(ProviderManifest.quoted(flag))", usage])
            }
            guard options[flag] == nil else { return (64, ["error: \(flag) given twice", usage]) }
            guard let value = remaining.popFirst(), !value.isEmpty else { return (64, ["error: \(flag) needs a value", usage]) }
            options[flag] = value
        }
        guard let manifestPath = options["--manifest"], let outputPath = options["--output"], let moduleName = options["--module-name"] else {
            return (64, ["error: --manifest, --output and --module-name are all required", usage])
        }
        let manifestURL = URL(fileURLWithPath: manifestPath)
        let absolutePath = manifestURL.standardizedFileURL.path
        // The path as diagnostics show it: what could forge or hide a line is escaped.
        let shownPath = LogText.readable(absolutePath, limit: 4096)
        switch ProviderManifest.read(atPath: absolutePath) {
        case .failure(let problems):
            return (1, problems.list.map { $0.formatted(path: shownPath) })
        case .success(let manifest):
            let code = Data(RegistrationCode.generate(manifest, manifestPath: absolutePath, moduleName: moduleName).utf8)
            do {
                // Written only when it changes; what is there is read no further than the new code's size.
                if (try? ExternalFile.read(atPath: outputPath, limit: code.count)) != code {
                    try code.write(to: URL(fileURLWithPath: outputPath), options: .atomic)
                }
            } catch {
                return (1, ["error: cannot write \(LogText.readable(outputPath, limit: 4096)): \((error as NSError).localizedDescription)"])
            }
            return (0, [])
        }
    }
}
