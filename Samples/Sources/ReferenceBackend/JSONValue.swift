import Foundation

/// A minimal JSON value, used to read JWT headers, claims and request bodies without
/// `JSONSerialization` (whose number bridging differs between platforms).
///
/// Values are read by ``JSONParser`` in one pass over the bytes, with a nesting-depth limit, so
/// the cost of reading untrusted input grows linearly with its size. `JSONValue` is deliberately
/// not `Decodable`: a `Decodable` JSON tree has to guess each value's type with one `try?` per
/// type at every level, whose cost grows with the cube of the nesting depth.
enum JSONValue: Encodable, Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    var numberValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Parses `data` as one JSON value.
    ///
    /// - Throws: ``JSONParser/Failure`` when `data` is not valid JSON, nests deeper than
    ///   `maximumDepth`, or repeats a key within an object.
    static func parse(_ data: some Collection<UInt8>, maximumDepth: Int = JSONParser.defaultMaximumDepth) throws -> JSONValue {
        var parser = JSONParser(data, maximumDepth: maximumDepth)
        return try parser.parseDocument()
    }

    /// Parses `data` as a JSON object; `nil` when it is not valid JSON (see ``parse(_:maximumDepth:)``)
    /// or not an object.
    static func object(from data: some Collection<UInt8>, maximumDepth: Int = JSONParser.defaultMaximumDepth) -> [String: JSONValue]? {
        (try? parse(data, maximumDepth: maximumDepth))?.objectValue
    }
}

/// A single-pass, recursive-descent JSON reader (RFC 8259) for untrusted input.
///
/// - Every byte is read a bounded number of times and nothing is re-parsed, so the work is linear
///   in the input; ``reads`` counts the byte reads so tests can check that.
/// - Arrays and objects nest at most ``maximumDepth`` levels (the top-level container is level 1),
///   which also bounds the recursion, so no input can exhaust the stack.
/// - Strict: no trailing commas, comments, leading zeros, non-finite numbers, control characters
///   or invalid UTF-8 in strings, unpaired surrogate escapes, duplicate keys in an object (a
///   duplicated claim or `customer_ids` could mean different things to different readers), or
///   anything but whitespace after the value.
struct JSONParser {
    /// Why the input was refused.
    enum Failure: Error, Equatable {
        /// The input is not JSON; `offset` is where reading stopped.
        case invalid(offset: Int)
        /// Arrays and objects nest deeper than ``JSONParser/maximumDepth``; found at `offset`.
        case tooDeep(offset: Int)
        /// An object names the same key twice.
        case duplicateKey(String)
    }

    /// The depth JWTKit also allows in JWT headers.
    static let defaultMaximumDepth = 32

    let maximumDepth: Int
    /// How many times a byte of the input was read so far: the parser's work, for tests.
    private(set) var reads = 0

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    init(_ bytes: some Collection<UInt8>, maximumDepth: Int = JSONParser.defaultMaximumDepth) {
        self.bytes = Array(bytes)
        self.maximumDepth = maximumDepth
    }

    /// Parses the whole input as one value surrounded by optional whitespace.
    mutating func parseDocument() throws(Failure) -> JSONValue {
        let value = try parseValue()
        skipWhitespace()
        guard peek() == nil else { throw .invalid(offset: index) }
        return value
    }

    // MARK: Bytes

    /// The current byte without consuming it; `nil` at the end.
    private mutating func peek() -> UInt8? {
        guard index < bytes.count else { return nil }
        reads += 1
        return bytes[index]
    }

    /// The current byte, consumed; `nil` at the end.
    private mutating func next() -> UInt8? {
        guard let byte = peek() else { return nil }
        index += 1
        return byte
    }

    private mutating func expect(_ byte: UInt8) throws(Failure) {
        guard next() == byte else { throw .invalid(offset: index) }
    }

    private mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
            index += 1
        }
    }

    // MARK: Values

    private mutating func parseValue() throws(Failure) -> JSONValue {
        skipWhitespace()
        guard let byte = peek() else { throw .invalid(offset: index) }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try parseLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try parseLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try parseLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw .invalid(offset: index)
        }
    }

    private mutating func parseLiteral(_ literal: String) throws(Failure) {
        for byte in literal.utf8 { try expect(byte) }
    }

    private mutating func enterContainer() throws(Failure) {
        depth += 1
        guard depth <= maximumDepth else { throw .tooDeep(offset: index) }
    }

    private mutating func parseArray() throws(Failure) -> JSONValue {
        try enterContainer()
        try expect(UInt8(ascii: "["))
        var elements: [JSONValue] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            index += 1
        } else {
            reading: while true {
                elements.append(try parseValue())
                skipWhitespace()
                switch next() {
                case UInt8(ascii: ","): continue reading
                case UInt8(ascii: "]"): break reading
                default: throw .invalid(offset: index)
                }
            }
        }
        depth -= 1
        return .array(elements)
    }

    private mutating func parseObject() throws(Failure) -> JSONValue {
        try enterContainer()
        try expect(UInt8(ascii: "{"))
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
        } else {
            reading: while true {
                skipWhitespace()
                guard peek() == UInt8(ascii: "\"") else { throw .invalid(offset: index) }
                let key = try parseString()
                skipWhitespace()
                try expect(UInt8(ascii: ":"))
                let value = try parseValue()
                guard members.updateValue(value, forKey: key) == nil else { throw .duplicateKey(key) }
                skipWhitespace()
                switch next() {
                case UInt8(ascii: ","): continue reading
                case UInt8(ascii: "}"): break reading
                default: throw .invalid(offset: index)
                }
            }
        }
        depth -= 1
        return .object(members)
    }

    private mutating func parseString() throws(Failure) -> String {
        try expect(UInt8(ascii: "\""))
        var utf8: [UInt8] = []
        while true {
            guard let byte = next() else { throw .invalid(offset: index) }
            switch byte {
            case UInt8(ascii: "\""):
                guard let string = String(validating: utf8, as: UTF8.self) else { throw .invalid(offset: index) }
                return string
            case UInt8(ascii: "\\"):
                try parseEscape(into: &utf8)
            case 0x00..<0x20:
                throw .invalid(offset: index - 1)
            default:
                utf8.append(byte)
            }
        }
    }

    private mutating func parseEscape(into utf8: inout [UInt8]) throws(Failure) {
        guard let byte = next() else { throw .invalid(offset: index) }
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(byte)
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0C)
        case UInt8(ascii: "n"): utf8.append(0x0A)
        case UInt8(ascii: "r"): utf8.append(0x0D)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"):
            var scalarValue = try parseHex4()
            if (0xD800..<0xDC00).contains(scalarValue) {
                // A high surrogate must be followed by an escaped low surrogate.
                try expect(UInt8(ascii: "\\"))
                try expect(UInt8(ascii: "u"))
                let low = try parseHex4()
                guard (0xDC00..<0xE000).contains(low) else { throw .invalid(offset: index) }
                scalarValue = 0x10000 + ((scalarValue - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let scalar = Unicode.Scalar(scalarValue) else { throw .invalid(offset: index) }
            utf8.append(contentsOf: Character(scalar).utf8)
        default:
            throw .invalid(offset: index - 1)
        }
    }

    private mutating func parseHex4() throws(Failure) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = next() else { throw .invalid(offset: index) }
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw .invalid(offset: index - 1)
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    private mutating func parseNumber() throws(Failure) -> Double {
        let start = index
        if peek() == UInt8(ascii: "-") { index += 1 }
        // Integer part: 0, or a non-zero digit followed by digits.
        switch next() {
        case UInt8(ascii: "0"): break
        case .some(UInt8(ascii: "1")...UInt8(ascii: "9")): skipDigits()
        default: throw .invalid(offset: index)
        }
        if peek() == UInt8(ascii: ".") {
            index += 1
            try requireDigits()
        }
        if let byte = peek(), byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            index += 1
            if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { index += 1 }
            try requireDigits()
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let number = Double(text), number.isFinite else { throw .invalid(offset: start) }
        return number
    }

    private mutating func skipDigits() {
        while let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
    }

    private mutating func requireDigits() throws(Failure) {
        guard let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { throw .invalid(offset: index) }
        skipDigits()
    }
}

enum Base64URL {
    static func encode(_ data: some DataProtocol) -> String {
        Data(data).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ string: some StringProtocol) -> Data? {
        var base64 = string
            .replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        guard !base64.contains("=") else { return nil }
        let remainder = base64.count % 4
        if remainder == 1 { return nil }
        if remainder > 0 { base64 += String(repeating: "=", count: 4 - remainder) }
        return Data(base64Encoded: base64)
    }
}
