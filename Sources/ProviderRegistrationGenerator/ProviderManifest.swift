import SDKAuthorization
import SDKAuthorizationModeKit
import SDKAuthorizationEngagement

/// The contents of `sdkauth-providers.json`: the providers a target registers at start-up.
///
/// ```json
/// {
///   "providers": [
///     {"name": "ExponeaAuthProvider", "type": "MyApp.ExampleAuthProvider", "mode": "customerToken"},
///     {"name": "PartnerToken", "type": "PartnerSDK.PartnerTokenMode", "mode": "factory"}
///   ]
/// }
/// ```
///
/// `name` is the name a configuration's `providerName` uses, checked as the configuration checks it;
/// `type` is a module-qualified Swift type, as the registry's run-time lookup reads one; `mode` is
/// `customerToken` (an `AuthorizationProviderType` class) or `factory` (a `StandaloneProviderFactory`: a mode that needs nothing from the app).
///
/// This is the one reader of the manifest: the build-time generator (`sdkauth-register-providers`)
/// and the authorization doctor (`sdkauth-config`) both read it through ``read(atPath:)``, so they
/// accept and refuse the same files with the same limits and the same `file:line:column` messages.
public struct ProviderManifest: Sendable, Equatable {
    /// The file name the plugin looks for in a target's directory.
    public static let fileName = "sdkauth-providers.json"

    /// Larger than any real manifest: a bigger file is refused before it is read.
    public static let maximumFileSize = 1 << 20

    /// How an entry's type is registered.
    public enum Mode: String, Sendable, CaseIterable {
        /// An `AuthorizationProviderType` class, registered with `ProviderRegistry.register(_:as:)`.
        case customerToken
        /// A `StandaloneProviderFactory` type, registered with `ProviderRegistry.register(_:as:)`.
        case factory
    }

    /// One provider the manifest registers.
    public struct Entry: Sendable, Equatable {
        /// The name a configuration's `providerName` uses.
        public let name: String
        /// The module-qualified Swift type registered under the name.
        public let type: String
        /// How the type is registered.
        public let mode: Mode
        /// The line of the entry's `{`.
        public let line: Int
        /// The line of its `"type"` value: where a compile error about the type points.
        public let typeLine: Int
    }

    /// The entries, in file order.
    public let entries: [Entry]

    /// Whether an entry registers `name`.
    public func declares(_ name: String) -> Bool { entries.contains { $0.name == name } }

    /// One problem in the manifest, as a compiler reports it:
    /// `path:line:column: error: entry "Name": message`.
    public struct Problem: Error, Sendable, Equatable {
        /// Where it is: the key or value concerned, or 1:1 for the whole file.
        public let position: SourcePosition
        /// `entry "Name"` or `entry 2` (1-based) when the entry has no usable name; nil for the file.
        public let entry: String?
        /// What is wrong, in words; values from the file are quoted and escaped.
        public let message: String

        /// `path:line:column: error: entry "Name": message`; `path` is shown as given (escape it first).
        public func formatted(path: String) -> String {
            "\(path):\(position.line):\(position.column): error: \(entry.map { "\($0): " } ?? "")\(message)"
        }
    }

    /// Every problem of a manifest, in file order.
    public struct Problems: Error, Sendable, Equatable {
        /// The problems, in file order; never empty.
        public let list: [Problem]
        init(_ list: [Problem]) { self.list = list }
    }

    /// Reads the manifest at `path` as the framework reads a configuration file (a symbolic link,
    /// directory or FIFO is refused, and a file larger than ``maximumFileSize`` is refused before it
    /// is read), then parses it. A file that cannot be read is one problem at 1:1.
    public static func read(atPath path: String) -> Result<ProviderManifest, Problems> {
        let bytes: [UInt8]
        do {
            bytes = Array(try ExternalFile.read(atPath: path, limit: maximumFileSize))
        } catch .tooLarge {
            return .failure(Problems([Problem(position: SourcePosition(line: 1, column: 1), entry: nil,
                                              message: "the manifest is larger than \(maximumFileSize) bytes")]))
        } catch {
            return .failure(Problems([Problem(position: SourcePosition(line: 1, column: 1), entry: nil,
                                              message: "cannot read \(fileName): \(error.reason)")]))
        }
        return parse(bytes)
    }

    /// Whether `type` is a type name a manifest accepts and the registry's run-time lookup can look
    /// for: `Module.Type`, `Module.Outer.Inner` or `Module.Type<Module.Argument>`, 2 to 6 parts,
    /// ASCII identifiers, at most 256 characters.
    public static func isTypeName(_ type: String) -> Bool { ProviderRegistry.isTypeName(type) }

    /// Reads a manifest; every problem found is returned, in file order.
    public static func parse(_ bytes: [UInt8]) -> Result<ProviderManifest, Problems> {
        let root: PositionedJSON
        do {
            root = try PositionedJSON.parse(bytes)
        } catch {
            return .failure(Problems([Problem(position: error.position, entry: nil, message: "malformed JSON: \(error.message)")]))
        }
        guard case .object(let members, let rootPosition) = root else {
            return .failure(Problems([Problem(position: root.position, entry: nil, message: "expected an object with a \"providers\" array, found \(root.kind)")]))
        }
        var problems: [Problem] = []
        var providers: PositionedJSON?
        for member in members {
            if member.key == "providers" {
                if providers != nil {
                    problems.append(Problem(position: member.keyPosition, entry: nil, message: "\"providers\" appears twice"))
                }
                providers = member.value
            } else {
                problems.append(Problem(position: member.keyPosition, entry: nil, message: "unknown key \(quoted(member.key)); the only key is \"providers\""))
            }
        }
        guard let providers else {
            problems.append(Problem(position: rootPosition, entry: nil, message: "missing the \"providers\" array"))
            return .failure(Problems(problems))
        }
        guard case .array(let elements, _) = providers else {
            problems.append(Problem(position: providers.position, entry: nil, message: "\"providers\" must be an array, found \(providers.kind)"))
            return .failure(Problems(problems))
        }
        var entries: [Entry] = []
        var firstLineOfName: [String: Int] = [:]
        for (offset, element) in elements.enumerated() {
            switch entry(element, number: offset + 1) {
            case .failure(let found):
                problems.append(contentsOf: found.list)
            case .success(let entry):
                if let first = firstLineOfName[entry.name] {
                    problems.append(Problem(position: element.position, entry: "entry \(quoted(entry.name))",
                                            message: "duplicate name; line \(first) registers it already"))
                } else {
                    firstLineOfName[entry.name] = entry.line
                    entries.append(entry)
                }
            }
        }
        return problems.isEmpty ? .success(ProviderManifest(entries: entries)) : .failure(Problems(problems))
    }

    private static func entry(_ element: PositionedJSON, number: Int) -> Result<Entry, Problems> {
        guard case .object(let members, let position) = element else {
            return .failure(Problems([Problem(position: element.position, entry: "entry \(number)", message: "expected an object with \"name\", \"type\" and \"mode\", found \(element.kind)")]))
        }
        // Named by its name once it has a string one, so every message says which entry it is.
        var label = "entry \(number)"
        for member in members where member.key == "name" {
            if case .string(let name, _) = member.value, !name.isEmpty { label = "entry \(quoted(name))" }
        }
        var problems: [Problem] = []
        var strings: [String: (String, SourcePosition)] = [:]
        for member in members {
            guard ["name", "type", "mode"].contains(member.key) else {
                problems.append(Problem(position: member.keyPosition, entry: label, message: "unknown key \(quoted(member.key)); the keys are \"name\", \"type\" and \"mode\""))
                continue
            }
            guard strings[member.key] == nil else {
                problems.append(Problem(position: member.keyPosition, entry: label, message: "\(quoted(member.key)) appears twice"))
                continue
            }
            guard case .string(let value, let valuePosition) = member.value else {
                problems.append(Problem(position: member.value.position, entry: label, message: "\(quoted(member.key)) must be a string, found \(member.value.kind)"))
                continue
            }
            strings[member.key] = (value, valuePosition)
        }
        for key in ["name", "type", "mode"] where strings[key] == nil && !members.contains(where: { $0.key == key }) {
            problems.append(Problem(position: position, entry: label, message: "missing \(quoted(key))"))
        }
        if let (name, namePosition) = strings["name"] {
            do {
                try AuthorizationConfiguration.checkProviderName(name)
            } catch {
                problems.append(Problem(position: namePosition, entry: label, message: "invalid name: \(error.reason ?? error.message)"))
            }
        }
        if let (type, typePosition) = strings["type"], !isTypeName(type) {
            problems.append(Problem(position: typePosition, entry: label, message: "\(quoted(type)) is not a module-qualified Swift type name (Module.Type, Module.Outer.Inner or Module.Type<Module.Argument>: 2 to 6 parts, ASCII identifiers, at most 256 characters)"))
        }
        var mode: Mode?
        if let (text, modePosition) = strings["mode"] {
            mode = Mode(rawValue: text)
            if mode == nil {
                problems.append(Problem(position: modePosition, entry: label, message: "unknown mode \(quoted(text)); the modes are \"customerToken\" (an AuthorizationProviderType class) and \"factory\" (a NamedProviderFactory type)"))
            }
        }
        guard problems.isEmpty, let (name, _) = strings["name"], let (type, typePosition) = strings["type"], let mode else {
            return .failure(Problems(problems))
        }
        return .success(Entry(name: name, type: type, mode: mode, line: position.line, typeLine: typePosition.line))
    }

    /// A value from the manifest, quoted and cut short for a message, escaped as the doctor and
    /// the framework escape what they echo (``LogText/doubleQuoted(_:limit:)``).
    static func quoted(_ text: String) -> String {
        LogText.doubleQuoted(text, limit: 80)
    }
}
