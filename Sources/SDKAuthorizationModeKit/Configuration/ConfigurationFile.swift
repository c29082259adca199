import Foundation
import SDKAuthorization

/// A configuration file's top-level values, read as every configuration of this framework reads
/// its file: a JSON object or a property list whose root is a dictionary, bounded, with a UTF-8
/// byte-order mark skipped.
///
/// It knows no key: a configuration schema (the Engagement configuration, or a mode's or an SDK's
/// own) reads the ``values`` it owns and places the errors its values earn in the file
/// (``placing(_:line:column:)``); with a ``ProviderRegistry``, it takes the settings of the mode the
/// file chooses, checked against that mode's keys (``modeSettings(registry:modeKey:schemaKeys:otherModes:)``,
/// or ``Modes`` for a schema that chooses the mode in more ways).
///
/// ```swift
/// let file = try ConfigurationFile(contentsOf: url)
/// guard case .string(let audience)? = file.values["audience"] else {
///     throw file.placing(.missingKey("audience"))
/// }
/// ```
///
/// Files are untrusted input: the path must name a regular file itself (a symbolic link, a
/// directory, a FIFO or a device is refused without waiting on it), at most ``maximumSize`` bytes
/// are read, JSON is read in one bounded pass that refuses a repeated key, and a property list is
/// checked for its size and shape (a dictionary of plain values, with dictionaries of plain values
/// at most one level down) before it is parsed.
public struct ConfigurationFile: Sendable {
    /// The formats a configuration file may have.
    public enum Format: Sendable {
        /// A JSON object.
        case json
        /// An XML or binary property list whose root is a dictionary.
        case propertyList
    }

    /// The largest configuration file read, in bytes (64 KB). A file is read no further than this,
    /// and a larger one fails with `ConfigurationError.fileTooLarge(limit:)`.
    public static let maximumSize = 65_536

    /// The file's name as errors show it (`authorization.json`), or `nil` for bytes read with
    /// ``init(data:format:)``.
    public let name: String?
    /// The file's path, as a placed error's `path` carries it, or `nil` for bytes.
    public let path: String?
    /// The file's top-level keys and their values: strings, numbers, booleans, and a vendor's
    /// dictionary of them (`Braze`); JSON may also hold arrays and `null` (as `.null`).
    public let values: [String: JWTClaimValue]

    /// Reads the configuration file at `url`; the format comes from the extension (`.json`,
    /// `.plist`), or from the content when the extension is neither.
    ///
    /// - Throws: `ConfigurationError`: `unreadableFile` (no such file, a link, a directory, a FIFO),
    ///   `fileTooLarge`, `duplicateKey`, and `malformedFile` naming the file (and, for JSON, the
    ///   line and column where reading stopped).
    public init(contentsOf url: URL) throws(ConfigurationError) {
        let data: Data
        do {
            data = try ExternalFile.read(atPath: url.path, limit: Self.maximumSize)
        } catch .tooLarge {
            throw .fileTooLarge(limit: Self.maximumSize)
        } catch {
            throw .unreadableFile(path: url.path, reason: error.reason)
        }
        let format: Format
        switch url.pathExtension.lowercased() {
        case "json": format = .json
        case "plist": format = .propertyList
        default: format = Self.sniffFormat(data)
        }
        try self.init(data: data, format: format, name: url.lastPathComponent, path: url.path)
    }

    /// Reads a configuration file's bytes in `format`, as ``init(contentsOf:)`` does; errors name
    /// no file.
    public init(data: Data, format: Format) throws(ConfigurationError) {
        try self.init(data: data, format: format, name: nil, path: nil)
    }

    private init(data: Data, format: Format, name: String?, path: String?) throws(ConfigurationError) {
        self.name = name
        self.path = path
        guard data.count <= Self.maximumSize else { throw .fileTooLarge(limit: Self.maximumSize) }
        // A UTF-8 byte-order mark, as some editors save one, is skipped, as every reader of the
        // framework skips it (the provider manifest's and the mode description's too).
        let data = Self.droppingByteOrderMark(data)
        let placement = ConfigurationError.Placement(name: name, path: path)
        switch format {
        case .json: values = try Self.jsonValues(data, placement: placement)
        case .propertyList:
            do throws(ConfigurationError) {
                values = try Self.propertyListValues(data)
            } catch where error.code == .malformedFile {
                throw error.placed(placement)
            }
        }
    }

    /// `error` placed in this file: its `path` is the file's, and its message ends with
    /// `(in authorization.json)` or, with a position, `(in authorization.json, line 3, column 1)`.
    /// An error of bytes read without a file gets the position only, or stays as it is.
    ///
    /// A schema places the errors its own keys' values earn this way, as the reader places its own.
    public func placing(_ error: ConfigurationError, line: Int? = nil, column: Int? = nil) -> ConfigurationError {
        error.placed(ConfigurationError.Placement(name: name, path: path), line: line, column: column)
    }

    private static let jsonShape = "expected a JSON object of configuration keys"
    private static let propertyListShape = "expected a property list whose root is a dictionary of configuration keys with plain values"

    /// The file's keys; a malformed file's error names the file, and the line and column where
    /// reading stopped (of the first value, when the file is JSON but not an object).
    private static func jsonValues(_ data: Data, placement: ConfigurationError.Placement) throws(ConfigurationError) -> [String: JWTClaimValue] {
        let malformed = ConfigurationError.malformedFile(reason: jsonShape)
        let value: JWTClaimValue
        do {
            value = try BoundedJSONReader.parse(data, maximumDepth: 4)
        } catch .duplicateKey(let key) {
            throw .duplicateKey(key)
        } catch .syntax(let offset) {
            let (line, column) = position(of: offset, in: data)
            throw malformed.placed(placement, line: line, column: column)
        } catch {
            throw malformed.placed(placement)
        }
        guard case .object(let values) = value else {
            let start = data.firstIndex { !(" \t\r\n".utf8.contains($0)) }.map { data.distance(from: data.startIndex, to: $0) } ?? 0
            let (line, column) = position(of: start, in: data)
            throw malformed.placed(placement, line: line, column: column)
        }
        return values
    }

    /// The line and column (1-based; a column counts characters, as editors do) of the byte at `offset`.
    static func position(of offset: Int, in data: Data) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for byte in data.prefix(offset) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1   // not a UTF-8 continuation byte: a new character
            }
        }
        return (line, column)
    }

    /// A configuration value as a property list holds it: plain values only.
    private enum PropertyListScalar: Decodable {
        case string(String), number(Double), bool(Bool), other

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            // Each attempt fails at once on a mismatch; nothing below a container is decoded.
            if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Double.self) {
                self = .number(value)
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else {
                self = .other
            }
        }

        var value: JWTClaimValue {
            switch self {
            case .string(let value): .string(value)
            case .number(let value): .number(value)
            case .bool(let value): .bool(value)
            case .other: .array([])
            }
        }
    }

    /// A top-level value: a plain value, or a vendor's dictionary of plain values (`Braze`).
    private enum PropertyListEntry: Decodable {
        case scalar(PropertyListScalar), dictionary([String: PropertyListScalar])

        init(from decoder: any Decoder) throws {
            let scalar = try PropertyListScalar(from: decoder)
            if case .other = scalar, let members = try? decoder.singleValueContainer().decode([String: PropertyListScalar].self) {
                self = .dictionary(members)
            } else {
                self = .scalar(scalar)
            }
        }

        var value: JWTClaimValue {
            switch self {
            case .scalar(let scalar): scalar.value
            case .dictionary(let members): .object(members.mapValues(\.value))
            }
        }
    }

    /// Checks the shape before any parser sees the bytes, so no nesting can overflow the stack:
    /// an XML property list holds a dictionary with dictionaries at most one level down, no
    /// `<array>`, and no `<key>` twice in one dictionary; a binary one holds at most 64 objects.
    private static func propertyListValues(_ data: Data) throws(ConfigurationError) -> [String: JWTClaimValue] {
        let bytes = [UInt8](data)
        if bytes.starts(with: Array("bplist".utf8)) {
            guard let objects = binaryPropertyListObjectCount(bytes), objects <= 64 else {
                throw .malformedFile(reason: propertyListShape)
            }
        } else {
            guard occurrences(of: "<array", in: bytes) == 0 else { throw .malformedFile(reason: propertyListShape) }
            try checkDictionaries(in: bytes)
        }
        do {
            return try PropertyListDecoder().decode([String: PropertyListEntry].self, from: data).mapValues(\.value)
        } catch {
            throw .malformedFile(reason: propertyListShape)
        }
    }

    /// An XML property list's dictionaries nest at most two deep, and none names a key twice.
    private static func checkDictionaries(in bytes: [UInt8]) throws(ConfigurationError) {
        let text = String(decoding: bytes, as: UTF8.self)
        var open: [Set<String>] = []
        var rest = Substring(text)
        while let start = rest.firstIndex(of: "<") {
            rest = rest[rest.index(after: start)...]
            if rest.hasPrefix("dict") {
                let tag = rest.prefix { $0 != ">" }
                if !tag.hasSuffix("/") {
                    open.append([])
                    guard open.count <= 2 else { throw .malformedFile(reason: propertyListShape) }
                }
            } else if rest.hasPrefix("/dict") {
                guard !open.isEmpty else { throw .malformedFile(reason: propertyListShape) }
                open.removeLast()
            } else if rest.hasPrefix("key>") {
                let body = rest.dropFirst(4)
                guard let end = body.range(of: "</key>") else { throw .malformedFile(reason: propertyListShape) }
                let key = String(body[..<end.lowerBound])
                guard !open.isEmpty else { throw .malformedFile(reason: propertyListShape) }
                guard open[open.count - 1].insert(key).inserted else { throw .duplicateKey(key) }
                rest = body[end.upperBound...]
            }
        }
    }

    /// How many times `needle` occurs in `bytes` (a linear scan).
    private static func occurrences(of needle: String, in bytes: [UInt8]) -> Int {
        let pattern = Array(needle.utf8)
        guard bytes.count >= pattern.count else { return 0 }
        var count = 0
        for start in 0...(bytes.count - pattern.count) where bytes[start] == pattern[0] {
            if bytes[start..<(start + pattern.count)].elementsEqual(pattern) { count += 1 }
        }
        return count
    }

    /// The object count from a binary property list's 32-byte trailer, or nil when there is none.
    private static func binaryPropertyListObjectCount(_ bytes: [UInt8]) -> UInt64? {
        guard bytes.count >= 40 else { return nil }
        let start = bytes.count - 24
        return bytes[start..<(start + 8)].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// `data` without a leading UTF-8 byte-order mark.
    static func droppingByteOrderMark(_ data: Data) -> Data {
        data.starts(with: [0xEF, 0xBB, 0xBF]) ? Data(data.dropFirst(3)) : data
    }

    private static func sniffFormat(_ data: Data) -> Format {
        let head = droppingByteOrderMark(data.prefix(16)).prefix(8)
        if head.starts(with: Data("bplist".utf8)) || head.starts(with: Data("<?xml".utf8)) { return .propertyList }
        return .json
    }
}

extension ConfigurationError {
    /// Where an error is placed: a file's name (as messages show it) and path.
    struct Placement {
        var name: String?
        var path: String?
    }

    /// This error with the file's path, and `(in name)` or `(in name, line 3, column 1)` (or
    /// `(at line 3, column 1)` without a name) after its message.
    func placed(_ placement: Placement, line: Int? = nil, column: Int? = nil) -> ConfigurationError {
        var place = placement.name.map { "in \(LogText.escaped($0, limit: 128))" }
        if let line, let column {
            place = (place.map { $0 + ", " } ?? "at ") + "line \(line), column \(column)"
        }
        guard let place else { return self }
        return ConfigurationError(code, "\(message) (\(place))", field: field, key: key, keys: keys, value: value, expected: expected,
                                  reason: reason, path: placement.path ?? path, limit: limit, name: name, scheme: scheme,
                                  endpoint: endpoint, endpoints: endpoints)
    }
}
