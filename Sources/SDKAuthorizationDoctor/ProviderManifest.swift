import Foundation
import SDKAuthorization
import SDKAuthorizationEngagement

/// A target's provider registration manifest, `sdkauth-providers.json`: the providers the app
/// registers at build time, by name.
///
/// ```json
/// {"providers": [{"name": "ExponeaAuthProvider", "type": "MyApp.ExampleAuthProvider", "mode": "customerToken"}]}
/// ```
///
/// `mode` is `customerToken` (an `AuthorizationProviderType` class) or `factory` (a
/// `NamedProviderFactory`). Keys other than these are ignored, so the manifest can grow.
package struct ProviderManifest: Sendable, Equatable {
    /// The manifest's file name, looked for beside a configuration file and in each folder above
    /// it up to the package directory.
    package static let fileName = "sdkauth-providers.json"

    /// One declared provider.
    package struct Entry: Sendable, Equatable {
        package var name: String
        package var type: String
        package var mode: String
    }

    /// The declared providers, in file order.
    package var providers: [Entry]

    /// Whether `name` is declared.
    package func declares(_ name: String) -> Bool { providers.contains { $0.name == name } }

    /// Why a manifest was refused: a sentence naming the entry and key concerned.
    package struct Failure: Error, Equatable {
        package var message: String
        package var key: String?
    }

    package static let modes = ["customerToken", "factory"]
    private static let shape = "expected {\"providers\": [{\"name\": ..., \"type\": \"Module.TypeName\", \"mode\": \"customerToken\" or \"factory\"}]}"

    /// Reads the manifest at `url` as the framework reads a configuration file: the path must name a
    /// regular file itself (not a symbolic link, a directory or a FIFO), and a file larger than
    /// `AuthorizationConfiguration.maximumFileSize` is refused before it is read.
    package init(contentsOf url: URL) throws(Failure) {
        let data: Data
        do {
            data = try ExternalFile.read(atPath: url.path, limit: AuthorizationConfiguration.maximumFileSize)
        } catch .tooLarge {
            throw Self.tooLarge
        } catch {
            throw Failure(message: "The provider manifest could not be read: \(error.reason).")
        }
        try self.init(data: data)
    }

    private static let tooLarge = Failure(message: "The provider manifest is larger than \(AuthorizationConfiguration.maximumFileSize) bytes; it was not read.")

    /// Reads a manifest with the framework's bounded JSON reader (a repeated key is refused).
    package init(data: Data) throws(Failure) {
        guard data.count <= AuthorizationConfiguration.maximumFileSize else { throw Self.tooLarge }
        let root: JWTClaimValue
        do {
            root = try BoundedJSONReader.parse(data, maximumDepth: 4)
        } catch BoundedJSONReader.Failure.duplicateKey(let key) {
            throw Failure(message: "The provider manifest names the key \(LogText.escaped(key, limit: 64)) twice in one object.", key: key)
        } catch {
            throw Failure(message: "The provider manifest is malformed: \(Self.shape).")
        }
        guard case .object(let object) = root, case .array(let items)? = object["providers"] else {
            throw Failure(message: "The provider manifest is malformed: \(Self.shape).", key: "providers")
        }
        var entries: [Entry] = []
        for (index, item) in items.enumerated() {
            let place = "providers[\(index)]"
            guard case .object(let fields) = item else {
                throw Failure(message: "The provider manifest's \(place) is not an object: \(Self.shape).", key: place)
            }
            func text(_ key: String) throws(Failure) -> String {
                guard let value = fields[key]?.stringValue, !value.trimmingCharacters(in: .whitespaces).isEmpty else {
                    throw Failure(message: "The provider manifest's \(place) needs a non-empty string \(key).", key: "\(place).\(key)")
                }
                return value
            }
            let entry = Entry(name: try text("name"), type: try text("type"), mode: try text("mode"))
            guard Self.isQualifiedTypeName(entry.type) else {
                throw Failure(message: "The provider manifest's \(place) type \(LogText.escaped(entry.type, limit: 64)) is not a module-qualified type name such as MyApp.ExampleAuthProvider.",
                              key: "\(place).type")
            }
            guard Self.modes.contains(entry.mode) else {
                throw Failure(message: "The provider manifest's \(place) mode \(LogText.escaped(entry.mode, limit: 64)) is not customerToken or factory.",
                              key: "\(place).mode")
            }
            guard !entries.contains(where: { $0.name == entry.name }) else {
                throw Failure(message: "The provider manifest declares the name \(LogText.escaped(entry.name, limit: 64)) twice.", key: "\(place).name")
            }
            entries.append(entry)
        }
        providers = entries
    }

    /// `Module.Type` or deeper (`Module.Outer.Inner`): ASCII identifiers joined by dots, at least two.
    static func isQualifiedTypeName(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 2, name.utf8.count <= ConfigurationError.maximumProviderNameLength else { return false }
        return parts.allSatisfy { part in
            guard let first = part.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
            return part.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }
        }
    }
}
