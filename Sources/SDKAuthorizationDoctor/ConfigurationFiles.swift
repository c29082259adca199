import Foundation
import ProviderRegistrationGenerator

/// Which files in a package are authorization configuration files, and where their manifest is.
package enum ConfigurationFiles {
    /// Names a configuration file may have besides `*authorization*.json` and `*authorization*.plist`.
    package static let fixedNames: Set<String> = ["sdkauth.json", "sdkauth.plist"]

    /// The rule, in words, for messages and documentation.
    package static let rule = "*authorization*.json, *authorization*.plist (any case), sdkauth.json or sdkauth.plist, outside hidden folders such as .build and nested packages"

    /// Whether a file named `name` is checked when the doctor looks through a package.
    package static func isConfigurationFileName(_ name: String) -> Bool {
        let lowered = name.lowercased()
        if fixedNames.contains(lowered) { return true }
        guard lowered.hasSuffix(".json") || lowered.hasSuffix(".plist") else { return false }
        return lowered.contains("authorization")
    }

    /// Every configuration file under `directory`, sorted by path. Hidden folders (`.build`,
    /// `.build-*`, `.git`, `.swiftpm`) are skipped, and so are folders holding a `Package.swift`
    /// of their own (another package, such as a test fixture or a samples package) and symbolic
    /// links to folders.
    package static func find(in directory: URL) -> [URL] {
        let keys: [URLResourceKey] = [.isRegularFileKey, .isDirectoryKey, .isSymbolicLinkKey]
        guard let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: keys, options: [.skipsHiddenFiles]) else {
            return []
        }
        var found: [URL] = []
        for case let url as URL in walker {
            let values = try? url.resourceValues(forKeys: Set(keys))
            if values?.isDirectory == true, values?.isSymbolicLink != true {
                if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { walker.skipDescendants() }
            } else if values?.isRegularFile == true, isConfigurationFileName(url.lastPathComponent) {
                found.append(url)
            }
        }
        return found.sorted { $0.path < $1.path }
    }

    /// The nearest `sdkauth-providers.json` to `file`: in its folder, then each folder above it up
    /// to and including `root` (only its own folder when it is not under `root`).
    package static func manifestURL(for file: URL, root: URL?) -> URL? {
        var folder = file.deletingLastPathComponent().standardizedFileURL
        let rootPath = root?.standardizedFileURL.path
        while true {
            let candidate = folder.appendingPathComponent(ProviderManifest.fileName)
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
            guard let rootPath, folder.path != rootPath, folder.path.hasPrefix(rootPath + "/") || rootPath == "/" else { return nil }
            let parent = folder.deletingLastPathComponent()
            guard parent.path != folder.path else { return nil }
            folder = parent
        }
    }

    /// `url` relative to `root` when it is inside it, else its path.
    package static func displayPath(_ url: URL, root: URL?) -> String {
        let path = url.standardizedFileURL.path
        guard let rootPath = root?.standardizedFileURL.path else { return path }
        let prefix = rootPath.hasSuffix("/") ? rootPath : rootPath + "/"
        return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : path
    }
}
