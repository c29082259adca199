import Foundation

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
        let bytes: [UInt8]
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: absolutePath)
            if let size = attributes[.size] as? NSNumber, size.intValue > ProviderManifest.maximumFileSize {
                return (1, ["\(absolutePath):1:1: error: the manifest is larger than \(ProviderManifest.maximumFileSize) bytes"])
            }
            bytes = Array(try Data(contentsOf: manifestURL))
        } catch {
            return (1, ["\(absolutePath):1:1: error: cannot read \(ProviderManifest.fileName): \(Self.reason(error))"])
        }
        switch ProviderManifest.parse(bytes) {
        case .failure(let problems):
            return (1, problems.list.map { $0.formatted(path: absolutePath) })
        case .success(let manifest):
            let code = RegistrationCode.generate(manifest, manifestPath: absolutePath, moduleName: moduleName)
            let outputURL = URL(fileURLWithPath: outputPath)
            do {
                if (try? Data(contentsOf: outputURL)) != Data(code.utf8) {
                    try Data(code.utf8).write(to: outputURL, options: .atomic)
                }
            } catch {
                return (1, ["error: cannot write \(outputPath): \(Self.reason(error))"])
            }
            return (0, [])
        }
    }

    private static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        if nsError.domain == NSCocoaErrorDomain, nsError.code == NSFileReadNoSuchFileError || nsError.code == NSFileNoSuchFileError {
            return "no such file"
        }
        return nsError.localizedDescription
    }
}
