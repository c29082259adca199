/// The rules every header field the framework sends must pass, checked on the UTF-8 bytes.
///
/// - A name is an HTTP token (RFC 9110 section 5.1): ASCII letters, digits, `!#$%&'*+-.^_|~` and the backtick.
/// - A value holds visible ASCII, space and horizontal tab only (RFC 9110 section 5.5, without
///   `obs-text`): no CR, LF, NUL or other control character, and no non-ASCII byte (U+2028 or
///   U+202E would reach the wire as raw UTF-8).
/// - A bearer token is an RFC 6750 `b64token`: letters, digits and `-._~+/`, then `=` padding.
public enum HeaderFieldRules {
    /// What ``check(_:)`` and ``checkBearer(_:)`` find.
    public enum Verdict: Equatable, Sendable {
        /// It may be sent.
        case valid
        /// It is empty or blank.
        case empty
        /// It holds a byte the rule does not allow.
        case forbiddenCharacters
    }

    /// Whether `byte` may appear in an HTTP token.
    public static func isTokenByte(_ byte: UInt8) -> Bool {
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
    public static func isValidName(_ name: String) -> Bool {
        !name.utf8.isEmpty && name.utf8.allSatisfy(isTokenByte)
    }

    /// The class of each byte: 0 cannot appear in a header value; 1 visible ASCII; 2 a `b64token`
    /// character; 3 `=`; 4 space; 5 horizontal tab. Read once per call, before a loop: on Linux
    /// each read of a static is a `swift_once` call ("1 prepare" rows).
    private static let byteClasses: [UInt8] = {
        var classes = [UInt8](repeating: 0, count: 256)
        for byte in 0x21...0x7E { classes[byte] = 1 }
        for byte in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~+/".utf8 { classes[Int(byte)] = 2 }
        classes[Int(UInt8(ascii: "="))] = 3
        classes[0x20] = 4
        classes[0x09] = 5
        return classes
    }()

    /// Whether `value` may be sent as a header field value.
    public static func isValidValue(_ value: String) -> Bool {
        var value = value
        let classes = byteClasses
        return value.withUTF8 { bytes in bytes.allSatisfy { classes[Int($0)] != 0 } }
    }

    /// Whether a caller-supplied header may be sent.
    public static func isValidHeader(name: String, value: String) -> Bool {
        isValidName(name) && isValidValue(value)
    }

    /// A credential (API key, project token, ID token): not empty or blank, and only visible ASCII
    /// and space (no tab: a credential has no use for one). One pass over the UTF-8 bytes.
    public static func check(_ credential: String) -> Verdict {
        var credential = credential
        let classes = byteClasses
        return credential.withUTF8 { bytes in
            var blank = true
            for byte in bytes {
                switch classes[Int(byte)] {
                case 0, 5: return .forbiddenCharacters
                case 4: continue
                default: blank = false
                }
            }
            return blank ? .empty : .valid
        }
    }

    /// A bearer token (RFC 6750 `b64token`): `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
    /// One pass over the UTF-8 bytes; ``Verdict/empty`` for a blank token.
    public static func checkBearer(_ token: String) -> Verdict {
        var token = token
        let classes = byteClasses
        return token.withUTF8 { bytes in
            var blank = true, sawPadding = false, grammar = true, characters = 0
            for byte in bytes {
                switch classes[Int(byte)] {
                case 0, 5:
                    return .forbiddenCharacters
                case 2:
                    if sawPadding { grammar = false }
                    characters += 1
                    blank = false
                case 3:
                    if characters == 0 { grammar = false }
                    sawPadding = true
                    blank = false
                case 4:
                    grammar = false
                default:
                    grammar = false
                    blank = false
                }
            }
            if blank { return .empty }
            return grammar ? .valid : .forbiddenCharacters
        }
    }
}

extension HeaderFieldRules {
    /// The header names (lower case) that frame the message, belong to one hop, or that the
    /// transport or the body's encoding owns. `Proxy-*` and pseudo-headers (`:authority`...) are
    /// owned too; ``isTransportOwnedName(_:)`` checks those by prefix.
    public static let transportOwnedNames: Set<String> = [
        "host", "content-length", "transfer-encoding", "connection", "upgrade", "te", "trailer", "keep-alive",
        "cookie", "set-cookie", "content-type", "content-encoding", "expect", "date", "via",
    ]

    /// Whether `name` (any case) is a header name the framework must never set for a credential, a
    /// signature or an idempotency key: a framing, hop-by-hop or transport-owned field
    /// (``transportOwnedNames``), any `Proxy-*` field, or an HTTP/2 pseudo-header (`:` first).
    ///
    /// Every site that accepts such a name from the SDK author asks this one function.
    public static func isTransportOwnedName(_ name: String) -> Bool {
        let bytes = name.utf8
        guard let first = bytes.first else { return false }
        if first == UInt8(ascii: ":") { return true }
        // The longest owned name, `transfer-encoding`, has 17 bytes; anything longer can only be `Proxy-*`.
        if bytes.count >= 6, bytes.prefix(6).elementsEqual("proxy-".utf8, by: { asciiLowercased($0) == $1 }) { return true }
        guard bytes.count <= 17 else { return false }
        let lowercased = String(unsafeUninitializedCapacity: bytes.count) { buffer in
            _ = buffer.initialize(fromContentsOf: bytes.lazy.map(asciiLowercased))
            return bytes.count
        }
        return transportOwnedNames.contains(lowercased)
    }

    /// Whether `name` (any case) is `Idempotency-Key`, the header that carries a queued request's
    /// idempotency key: never a credential's, a signature's or an added field's, on any path.
    public static func isIdempotencyKeyName(_ name: String) -> Bool {
        sameName(name, "Idempotency-Key")
    }

    /// Whether two header field names are the same name: equal but for the case of ASCII letters
    /// (RFC 9110 section 5.1). No Unicode case folding: a name is an ASCII token, and `K` (Kelvin
    /// sign) is not `k`.
    public static func sameName(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.elementsEqual(rhs.utf8) { asciiLowercased($0) == asciiLowercased($1) }
    }

    /// `byte` with an ASCII capital letter made small; every other byte as it is.
    public static func asciiLowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }
}
