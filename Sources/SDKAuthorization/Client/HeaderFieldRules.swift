/// The rules every header field the framework sends must pass, checked on the UTF-8 bytes.
///
/// - A name is an HTTP token (RFC 9110 section 5.1): ASCII letters, digits and ``!#$%&'*+-.^_`|~``.
/// - A value holds visible ASCII, space and horizontal tab only (RFC 9110 section 5.5, without
///   `obs-text`): no CR, LF, NUL or other control character, and no non-ASCII byte (U+2028 or
///   U+202E would reach the wire as raw UTF-8).
/// - A bearer token is an RFC 6750 `b64token`: letters, digits and `-._~+/`, then `=` padding.
enum HeaderFieldRules {
    enum Verdict: Equatable { case valid, empty, forbiddenCharacters }

    /// Whether `byte` may appear in an HTTP token.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// Whether `name` is a valid header field name.
    static func isValidName(_ name: String) -> Bool {
        !name.utf8.isEmpty && name.utf8.allSatisfy(isTokenByte)
    }

    /// Whether `value` may be sent as a header field value.
    static func isValidValue(_ value: String) -> Bool {
        value.utf8.allSatisfy { byte in (0x20...0x7E).contains(byte) || byte == 0x09 }
    }

    /// Whether a caller-supplied header may be sent.
    static func isValidHeader(name: String, value: String) -> Bool {
        isValidName(name) && isValidValue(value)
    }

    /// A credential (API key, project token, ID token): not empty or blank, and only visible ASCII
    /// and space (no tab: a credential has no use for one).
    static func check(_ credential: String) -> Verdict {
        var blank = true
        for byte in credential.utf8 {
            switch byte {
            case 0x21...0x7E: blank = false
            case 0x20: continue
            default: return .forbiddenCharacters
            }
        }
        return blank ? .empty : .valid
    }

    /// A bearer token (RFC 6750 `b64token`): `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
    static func checkBearer(_ token: String) -> Verdict {
        switch check(token) {
        case .valid: break
        case let other: return other
        }
        var sawPadding = false
        var count = 0
        for byte in token.utf8 {
            switch byte {
            case UInt8(ascii: "="):
                guard count > 0 else { return .forbiddenCharacters }
                sawPadding = true
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "+"), UInt8(ascii: "/"):
                guard !sawPadding else { return .forbiddenCharacters }
                count += 1
            default:
                return .forbiddenCharacters
            }
        }
        return .valid
    }
}
