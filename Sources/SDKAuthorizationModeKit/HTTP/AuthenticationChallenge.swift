import Foundation
import SDKAuthorization

/// One challenge of a `WWW-Authenticate` field (RFC 9110 §11.6.1): its scheme and parameters, as a
/// mode reads a rejection (`Bearer error="invalid_token"`, `DPoP error="use_dpop_nonce"`) to decide
/// whether to refresh, retry or fail.
///
/// ```swift
/// let error = response.authenticationChallenges.first { $0.isScheme("Bearer") }?.parameter("error")
/// if error == "invalid_token" { ... }
/// ```
///
/// The reader is bounded and tolerant: several challenges in one field, parameters with token or
/// quoted-string values (backslash escapes), a token68 or junk skipped to the next comma. It never
/// traps, and reads at most ``maximumFieldLength`` bytes (a longer field gives no challenge),
/// ``maximumChallenges`` challenges and ``maximumParameters`` parameters in each. Its
/// `description` shows the scheme and the parameters' names, never their values.
public struct AuthenticationChallenge: Sendable, Equatable, CustomStringConvertible {
    /// A longer field is not read at all (8 KiB).
    public static let maximumFieldLength = 8_192
    /// Challenges past this many are ignored (16).
    public static let maximumChallenges = 16
    /// Parameters past this many in one challenge are ignored (32).
    public static let maximumParameters = 32

    /// The scheme as the server wrote it (`DPoP`, `Bearer`).
    public let scheme: String
    /// The parameters, by lowercased name; the first of a repeated name wins.
    public private(set) var parameters: [String: String]

    /// A challenge of `scheme` with `parameters` (names lowercased by the reader; give them so).
    public init(scheme: String, parameters: [String: String] = [:]) {
        self.scheme = scheme
        self.parameters = parameters
    }

    /// Whether the challenge's scheme is `name`, compared case-insensitively (ASCII).
    public func isScheme(_ name: String) -> Bool {
        scheme.lowercased() == name.lowercased()
    }

    /// The parameter named `name` (compared case-insensitively), or `nil`.
    public func parameter(_ name: String) -> String? {
        parameters[name.lowercased()]
    }

    /// The scheme and the parameters' names; never their values.
    public var description: String {
        let names = parameters.keys.sorted().map { LogText.plain($0, limit: 32) }.joined(separator: ", ")
        return "\(LogText.plain(scheme, limit: 32))(\(names))"
    }

    /// The challenges in `field`, in order.
    public static func parse(_ field: String) -> [AuthenticationChallenge] {
        let bytes = Array(field.utf8)
        guard bytes.count <= maximumFieldLength else { return [] }
        var reader = Reader(bytes: bytes)
        var challenges: [AuthenticationChallenge] = []
        while true {
            reader.skip { $0 == .space || $0 == .tab || $0 == .comma }
            guard !reader.isAtEnd else { break }
            let name = reader.token()
            guard !name.isEmpty else {
                // Not a token (a stray quote, `=`, a non-ASCII byte): skip to the next comma.
                reader.skipPastElement()
                continue
            }
            reader.skip { $0 == .space || $0 == .tab }
            if reader.peek == .equals, !challenges.isEmpty {
                reader.advance()
                reader.skip { $0 == .space || $0 == .tab }
                let value = reader.peek == .quote ? reader.quotedString() : reader.token()
                let key = name.lowercased()
                let last = challenges.count - 1
                if challenges[last].parameters.count < maximumParameters, challenges[last].parameters[key] == nil {
                    challenges[last].parameters[key] = value
                }
                // Whatever follows the value before the next comma is junk.
                reader.skipPastElement()
            } else if reader.peek == .equals {
                // A parameter before any scheme: nothing to attach it to.
                reader.skipPastElement()
            } else {
                guard challenges.count < maximumChallenges else { break }
                challenges.append(AuthenticationChallenge(scheme: name))
            }
        }
        return challenges
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        var isAtEnd: Bool { index >= bytes.count }
        var peek: UInt8? { isAtEnd ? nil : bytes[index] }

        mutating func advance() { index += 1 }

        mutating func skip(while matches: (UInt8) -> Bool) {
            while let byte = peek, matches(byte) { index += 1 }
        }

        /// An RFC 9110 token (`tchar`s); empty when none starts here.
        mutating func token() -> String {
            let start = index
            skip(while: Self.isTokenCharacter)
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        /// A quoted string starting at the quote, its escapes resolved; an unterminated one runs to the end.
        mutating func quotedString() -> String {
            advance()
            var value: [UInt8] = []
            while let byte = peek {
                advance()
                if byte == .quote { break }
                if byte == .backslash, let escaped = peek {
                    advance()
                    value.append(escaped)
                } else {
                    value.append(byte)
                }
            }
            return String(decoding: value, as: UTF8.self)
        }

        /// Skips to the next comma outside a quoted string (or the end).
        mutating func skipPastElement() {
            while let byte = peek, byte != .comma {
                if byte == .quote { _ = quotedString() } else { advance() }
            }
        }

        static func isTokenCharacter(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
            default: Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
            }
        }
    }
}


extension ServerResponse {
    /// The challenges of its `WWW-Authenticate` field, read as ``AuthenticationChallenge/parse(_:)``
    /// reads them; none when it has no such field.
    public var authenticationChallenges: [AuthenticationChallenge] {
        value(forHeader: "WWW-Authenticate").map(AuthenticationChallenge.parse) ?? []
    }
}

private extension UInt8 {
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let comma = UInt8(ascii: ",")
    static let equals = UInt8(ascii: "=")
    static let quote = UInt8(ascii: "\"")
    static let backslash = UInt8(ascii: "\\")
}
