/// A line and column in a text file, both from 1 (columns count UTF-8 bytes, as compilers do).
public struct SourcePosition: Sendable, Equatable, CustomStringConvertible {
    /// The line, from 1.
    public let line: Int
    /// The column, from 1, in UTF-8 bytes.
    public let column: Int

    /// A position.
    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    /// `line:column`.
    public var description: String { "\(line):\(column)" }
}

/// A JSON value that remembers where it starts, so an error can name the manifest line.
///
/// Foundation's `JSONSerialization` gives values without positions; the manifest is small, so this
/// reader (strict RFC 8259: no comments, no trailing commas) keeps the line of every value and key.
package indirect enum PositionedJSON: Sendable {
    case object([Member], SourcePosition)
    case array([PositionedJSON], SourcePosition)
    case string(String, SourcePosition)
    case number(String, SourcePosition)
    case bool(Bool, SourcePosition)
    case null(SourcePosition)

    /// One `"key": value` of an object, in file order (duplicates kept, for the caller to refuse).
    package struct Member: Sendable {
        package let key: String
        package let keyPosition: SourcePosition
        package let value: PositionedJSON
    }

    package var position: SourcePosition {
        switch self {
        case .object(_, let position), .array(_, let position), .string(_, let position),
             .number(_, let position), .bool(_, let position), .null(let position):
            return position
        }
    }

    /// What the value is, in words, for "expected a string, found an array".
    package var kind: String {
        switch self {
        case .object: return "an object"
        case .array: return "an array"
        case .string: return "a string"
        case .number: return "a number"
        case .bool: return "a boolean"
        case .null: return "null"
        }
    }

    /// A syntax error and where it is.
    package struct SyntaxError: Error, Sendable, Equatable {
        package let message: String
        package let position: SourcePosition
    }

    /// Parses `bytes` (UTF-8) as one JSON value.
    package static func parse(_ bytes: [UInt8]) throws(SyntaxError) -> PositionedJSON {
        var reader = Reader(bytes: bytes)
        // A byte-order mark, as some editors write one, is not part of the text.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            reader.index = 3
            reader.lineStart = 3
        }
        reader.skipWhitespace()
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.index == bytes.count else { throw reader.error("unexpected text after the JSON value") }
        return value
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0
        var line = 1
        var lineStart = 0

        /// Deeper than any manifest needs; keeps a hostile file from exhausting the stack.
        static let maximumDepth = 32

        var position: SourcePosition { SourcePosition(line: line, column: index - lineStart + 1) }

        func error(_ message: String) -> SyntaxError { SyntaxError(message: message, position: position) }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\n"):
                    index += 1
                    line += 1
                    lineStart = index
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                    index += 1
                default:
                    return
                }
            }
        }

        mutating func value(depth: Int) throws(SyntaxError) -> PositionedJSON {
            guard depth <= Self.maximumDepth else { throw error("nested deeper than \(Self.maximumDepth) levels") }
            guard index < bytes.count else { throw error("unexpected end of file, expected a value") }
            let start = position
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                var members: [Member] = []
                skipWhitespace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    return .object(members, start)
                }
                while true {
                    skipWhitespace()
                    let keyPosition = position
                    guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a quoted key") }
                    let key = try string()
                    skipWhitespace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':' after the key \"\(key)\"") }
                    index += 1
                    skipWhitespace()
                    members.append(Member(key: key, keyPosition: keyPosition, value: try value(depth: depth + 1)))
                    skipWhitespace()
                    guard index < bytes.count else { throw error("unexpected end of file, expected ',' or '}'") }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members, start) }
                    throw error("expected ',' or '}'")
                }
            case UInt8(ascii: "["):
                index += 1
                var elements: [PositionedJSON] = []
                skipWhitespace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    return .array(elements, start)
                }
                while true {
                    skipWhitespace()
                    elements.append(try value(depth: depth + 1))
                    skipWhitespace()
                    guard index < bytes.count else { throw error("unexpected end of file, expected ',' or ']'") }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements, start) }
                    throw error("expected ',' or ']'")
                }
            case UInt8(ascii: "\""):
                return .string(try string(), start)
            case UInt8(ascii: "t"):
                try literal("true")
                return .bool(true, start)
            case UInt8(ascii: "f"):
                try literal("false")
                return .bool(false, start)
            case UInt8(ascii: "n"):
                try literal("null")
                return .null(start)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                let begin = index
                while index < bytes.count, "+-.eE0123456789".utf8.contains(bytes[index]) { index += 1 }
                let text = String(decoding: bytes[begin..<index], as: UTF8.self)
                guard Double(text) != nil else { throw SyntaxError(message: "\(text) is not a number", position: start) }
                return .number(text, start)
            default:
                throw error("unexpected character, expected a value")
            }
        }

        mutating func literal(_ word: String) throws(SyntaxError) {
            let expected = Array(word.utf8)
            guard index + expected.count <= bytes.count, Array(bytes[index..<index + expected.count]) == expected else {
                throw error("unexpected character, expected a value")
            }
            index += expected.count
        }

        /// A string at `index` (which is its opening quote); control characters must be escaped.
        mutating func string() throws(SyntaxError) -> String {
            index += 1
            var scalars = String.UnicodeScalarView()
            var raw: [UInt8] = []
            func flush() {
                scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars)
                raw.removeAll()
            }
            while true {
                guard index < bytes.count else { throw error("unterminated string") }
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    flush()
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    flush()
                    index += 1
                    guard index < bytes.count else { throw error("unterminated string") }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""): scalars.append("\"")
                    case UInt8(ascii: "\\"): scalars.append("\\")
                    case UInt8(ascii: "/"): scalars.append("/")
                    case UInt8(ascii: "b"): scalars.append("\u{8}")
                    case UInt8(ascii: "f"): scalars.append("\u{C}")
                    case UInt8(ascii: "n"): scalars.append("\n")
                    case UInt8(ascii: "r"): scalars.append("\r")
                    case UInt8(ascii: "t"): scalars.append("\t")
                    case UInt8(ascii: "u"):
                        var code = try hex4()
                        if (0xD800...0xDBFF).contains(code) {
                            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                                throw error("unpaired surrogate in a \\u escape")
                            }
                            index += 2
                            let low = try hex4()
                            guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate in a \\u escape") }
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let scalar = Unicode.Scalar(code) else { throw error("unpaired surrogate in a \\u escape") }
                        scalars.append(scalar)
                    default:
                        throw error("invalid escape in a string")
                    }
                case 0..<0x20:
                    throw error("control character in a string (escape it)")
                default:
                    raw.append(byte)
                    index += 1
                }
            }
        }

        mutating func hex4() throws(SyntaxError) -> UInt32 {
            guard index + 4 <= bytes.count, let code = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16) else {
                throw error("a \\u escape needs four hexadecimal digits")
            }
            index += 4
            return code
        }
    }
}
