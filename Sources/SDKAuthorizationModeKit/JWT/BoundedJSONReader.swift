import Foundation
import SDKAuthorization

/// A JSON reader for untrusted input (JWT segments, configuration files, error bodies).
///
/// - One pass over the UTF-8 bytes: time linear in the input, whatever its shape.
/// - Nesting deeper than `maximumDepth` is refused, so recursion can never overflow the stack.
/// - A key repeated in one object is refused: tools disagree on which value wins.
/// - Numbers must be finite and at most 64 characters; strings must be valid UTF-8 without raw
///   control characters; nothing but white space may follow the value.
public enum BoundedJSONReader {
    /// Why the input is not read. A failure never repeats the input beyond a duplicate key.
    public enum Failure: Error, Equatable {
        /// The input is not JSON, or holds what the reader refuses; `offset` is the byte where
        /// reading stopped.
        case syntax(offset: Int)
        /// Nesting deeper than `limit`.
        case tooDeep(limit: Int)
        /// A key repeated in one object (escape it with `LogText` before showing it).
        case duplicateKey(String)
    }

    /// The default nesting limit: far above any JWT or configuration file.
    public static let defaultMaximumDepth = 32

    /// Parses `data` as one JSON value.
    public static func parse(_ data: some Collection<UInt8>, maximumDepth: Int = defaultMaximumDepth) throws(Failure) -> JWTClaimValue {
        try parse(reading: Array(data), maximumDepth: maximumDepth)
    }

    /// Parses `bytes` where they lie, reading every byte through their subscript: a test hands it
    /// a byte source that counts the reads, a measure of the parser's work that the parser does not
    /// report about itself. `bytes` start at index 0.
    static func parse<Bytes: RandomAccessCollection<UInt8>>(reading bytes: Bytes, maximumDepth: Int = defaultMaximumDepth)
        throws(Failure) -> JWTClaimValue where Bytes.Index == Int {
        precondition(bytes.startIndex == 0, "the bytes must start at index 0")
        var reader = Reader(bytes, maximumDepth: maximumDepth)
        reader.skipWhitespace()
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.index == bytes.count else { throw .syntax(offset: reader.index) }
        return value
    }
}

/// One parse: the bytes, where it is in them, and how deep it may nest.
private struct Reader<Bytes: RandomAccessCollection<UInt8>> where Bytes.Index == Int {
    typealias Failure = BoundedJSONReader.Failure

    private let bytes: Bytes
    private let maximumDepth: Int
    private(set) var index = 0

    init(_ bytes: Bytes, maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    private mutating func expect(_ literal: StaticString) throws(Failure) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw .syntax(offset: index) }
        let matches = literal.withUTF8Buffer { buffer in
            buffer.indices.allSatisfy { bytes[index + $0] == buffer[$0] }
        }
        guard matches else { throw .syntax(offset: index) }
        index += count
    }

    mutating func value(depth: Int) throws(Failure) -> JWTClaimValue {
        switch current {
        case UInt8(ascii: "{")?:
            guard depth < maximumDepth else { throw .tooDeep(limit: maximumDepth) }
            return .object(try object(depth: depth + 1))
        case UInt8(ascii: "[")?:
            guard depth < maximumDepth else { throw .tooDeep(limit: maximumDepth) }
            return .array(try array(depth: depth + 1))
        case UInt8(ascii: "\"")?:
            return .string(try string())
        case UInt8(ascii: "t")?:
            try expect("true")
            return .bool(true)
        case UInt8(ascii: "f")?:
            try expect("false")
            return .bool(false)
        case UInt8(ascii: "n")?:
            try expect("null")
            return .null
        case let byte? where byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte):
            return .number(try number())
        default:
            throw .syntax(offset: index)
        }
    }

    private mutating func object(depth: Int) throws(Failure) -> [String: JWTClaimValue] {
        index += 1 // {
        var result: [String: JWTClaimValue] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return result
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw .syntax(offset: index) }
            let key = try string()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw .syntax(offset: index) }
            index += 1
            skipWhitespace()
            let element = try value(depth: depth)
            guard result.updateValue(element, forKey: key) == nil else { throw .duplicateKey(key) }
            skipWhitespace()
            switch current {
            case UInt8(ascii: ",")?: index += 1
            case UInt8(ascii: "}")?:
                index += 1
                return result
            default: throw .syntax(offset: index)
            }
        }
    }

    private mutating func array(depth: Int) throws(Failure) -> [JWTClaimValue] {
        index += 1 // [
        var result: [JWTClaimValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return result
        }
        while true {
            skipWhitespace()
            result.append(try value(depth: depth))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ",")?: index += 1
            case UInt8(ascii: "]")?:
                index += 1
                return result
            default: throw .syntax(offset: index)
            }
        }
    }

    private mutating func string() throws(Failure) -> String {
        index += 1 // opening quote
        var buffer: [UInt8] = []
        while let byte = current {
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                // Valid UTF-8 decodes to the same bytes; invalid bytes decode to U+FFFD. (Foundation's
                // `String(bytes:encoding:)` would also drop a U+FEFF that starts the string.)
                let text = String(decoding: buffer, as: UTF8.self)
                guard text.utf8.elementsEqual(buffer) else { throw .syntax(offset: index) }
                return text
            case UInt8(ascii: "\\"):
                guard let escaped = current else { throw .syntax(offset: index) }
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(escaped)
                case UInt8(ascii: "b"): buffer.append(0x08)
                case UInt8(ascii: "f"): buffer.append(0x0C)
                case UInt8(ascii: "n"): buffer.append(0x0A)
                case UInt8(ascii: "r"): buffer.append(0x0D)
                case UInt8(ascii: "t"): buffer.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        try expect("\\u")
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw .syntax(offset: index) }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw .syntax(offset: index)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw .syntax(offset: index) }
                    buffer.append(contentsOf: String(Character(unicode)).utf8)
                default:
                    throw .syntax(offset: index)
                }
            case 0x00..<0x20:
                throw .syntax(offset: index)
            default:
                buffer.append(byte)
            }
        }
        throw .syntax(offset: index)
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard index + 4 <= bytes.count else { throw .syntax(offset: index) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw .syntax(offset: index)
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func number() throws(Failure) -> Double {
        let start = index
        func digits() -> Int {
            let first = index
            while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
            return index - first
        }
        if current == UInt8(ascii: "-") { index += 1 }
        if current == UInt8(ascii: "0") {
            index += 1
        } else if digits() == 0 {
            throw .syntax(offset: index)
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw .syntax(offset: index) }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw .syntax(offset: index) }
        }
        guard index - start <= 64,
              let number = Double(String(decoding: bytes[start..<index], as: UTF8.self)), number.isFinite
        else { throw .syntax(offset: start) }
        return number
    }
}
