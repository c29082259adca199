import Foundation
import SDKAuthorization

/// Writes compact JSON, as a mode puts it in a JWT or a token request: the writer that goes with
/// ``BoundedJSONReader``, so what one writes the other reads back to the same values.
///
/// ```swift
/// let claims = JSONWriter.object([("htm", .string("GET")), ("iat", .number(1_700_000_000))])
/// // {"htm":"GET","iat":1700000000}
/// ```
public enum JSONWriter {
    /// `members` as one JSON object, in the order given, without white space.
    ///
    /// Any string is written: `"` and `\` are escaped, control characters (U+0000 to U+001F) as
    /// `\n`, `\r`, `\t`, `\b`, `\f` or `\u00XX`, and U+FEFF (a byte-order mark, which some
    /// readers drop) as `\ufeff`; every other character (U+2028, U+2029, DEL and the rest of
    /// non-ASCII) is valid in a JSON string and written as it is, in UTF-8.
    /// A nested ``JWTClaimValue/object(_:)`` writes its members sorted by name. A whole number of
    /// magnitude below 10¹⁵ is written without a fraction (`1700000000`); NaN and the infinities,
    /// which JSON cannot hold, are written as `null`.
    ///
    /// A name given twice is written twice: most readers keep one of the values, and
    /// ``BoundedJSONReader`` refuses the text, so give each name once.
    ///
    /// - Parameter members: The object's names and values, in the order they are written.
    /// - Returns: The JSON text, such as `{"token":"eyJ..."}`.
    public static func object(_ members: [(name: String, value: JWTClaimValue)]) -> String {
        var text = "{"
        for (index, member) in members.enumerated() {
            if index > 0 { text += "," }
            text += string(member.name) + ":"
            write(member.value, to: &text)
        }
        return text + "}"
    }

    /// `text` as a JSON string literal, in double quotes: `"`, `\`, control characters and U+FEFF
    /// escaped, every other character as it is.
    static func string(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\u{8}": result += "\\b"
            case "\u{C}": result += "\\f"
            case _ where scalar.value < 0x20 || scalar == "\u{FEFF}":
                let hex = String(scalar.value, radix: 16, uppercase: false)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// Writes `value`; it recurses once per level of nesting, as deep as the value itself nests
    /// (a value ``BoundedJSONReader`` read nests at most its `maximumDepth`).
    private static func write(_ value: JWTClaimValue, to text: inout String) {
        switch value {
        case .string(let string): text += Self.string(string)
        case .number(let number): text += number.isFinite ? ModeSettingKey.text(number) : "null"
        case .bool(let flag): text += flag ? "true" : "false"
        case .null: text += "null"
        case .array(let elements):
            text += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { text += "," }
                write(element, to: &text)
            }
            text += "]"
        case .object(let members):
            text += object(members.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) })
        }
    }
}

/// base64url without padding (RFC 7515 §2), the encoding of a JWT's segments and of hashes that
/// claims carry (a DPoP proof's `ath`).
public enum Base64URL {
    /// `data` in base64url: `-` and `_` for base64's `+` and `/`, without `=` padding.
    ///
    /// - Parameter data: Any bytes.
    /// - Returns: The text, such as `AQID` for the bytes 1, 2, 3; empty for no bytes.
    public static func encode(_ data: some Sequence<UInt8>) -> String {
        var text = Data(data).base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    /// The bytes of a JWT segment, `nil` when it is not base64url: padding (`=`) is refused, and a
    /// length that leaves one character over (4n + 1) is no encoding.
    static func decode(_ segment: Substring) -> Data? {
        var base64 = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard !base64.contains("=") else { return nil }
        switch base64.count % 4 {
        case 0: break
        case 2: base64 += "=="
        case 3: base64 += "="
        default: return nil
        }
        return Data(base64Encoded: base64)
    }
}
