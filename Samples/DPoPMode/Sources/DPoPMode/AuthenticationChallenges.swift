import Foundation
import SDKAuthorization

/// One challenge of a `WWW-Authenticate` field (RFC 9110 §11.6.1): its scheme and parameters.
struct AuthenticationChallenge: Equatable {
    /// The scheme as the server wrote it (`DPoP`, `Bearer`).
    let scheme: String
    /// The parameters, by lowercased name; the first of a repeated name wins.
    var parameters: [String: String] = [:]
}

/// A bounded, tolerant reader of `WWW-Authenticate` fields: several challenges, parameters with
/// token or quoted-string values (backslash escapes), a token68 or junk skipped to the next comma.
/// It never traps and reads at most ``maximumLength`` bytes, ``maximumChallenges`` challenges and
/// ``maximumParameters`` parameters in each.
enum AuthenticationChallenges {
    /// A longer field is not read at all.
    static let maximumLength = 8_192
    /// Challenges past this many are ignored.
    static let maximumChallenges = 16
    /// Parameters past this many in one challenge are ignored.
    static let maximumParameters = 32

    /// The challenges in `field`, in order.
    static func parse(_ field: String) -> [AuthenticationChallenge] {
        let bytes = Array(field.utf8)
        guard bytes.count <= maximumLength else { return [] }
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
                if challenges[challenges.count - 1].parameters.count < maximumParameters, challenges[challenges.count - 1].parameters[key] == nil {
                    challenges[challenges.count - 1].parameters[key] = value
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

    /// The `error` parameter of the first `DPoP` challenge (scheme compared case-insensitively) in
    /// `response`'s `WWW-Authenticate` field, or `nil`.
    static func dpopError(in response: ServerResponse) -> String? {
        guard let field = response.value(forHeader: "WWW-Authenticate") else { return nil }
        return parse(field).first { $0.scheme.lowercased() == "dpop" && $0.parameters["error"] != nil }?.parameters["error"]
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

private extension UInt8 {
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let comma = UInt8(ascii: ",")
    static let equals = UInt8(ascii: "=")
    static let quote = UInt8(ascii: "\"")
    static let backslash = UInt8(ascii: "\\")
}

/// The nonces servers gave (RFC 9449 §8, §9), one per origin: the token endpoint's and each
/// resource server's. A nonce that is empty, longer than ``maximumLength`` bytes, or holds anything
/// but visible ASCII is ignored; at most ``maximumOrigins`` origins are kept (the oldest is dropped).
final class DPoPNonces: Sendable {
    /// The longest nonce kept, in bytes.
    static let maximumLength = 512
    /// The most origins whose nonce is kept.
    static let maximumOrigins = 32

    private let nonces = Locked<[(origin: String, nonce: String)]>([])

    /// The nonce last given by `url`'s origin.
    func nonce(for url: URL) -> String? {
        guard let origin = Self.origin(of: url) else { return nil }
        return nonces.withLock { $0.first { $0.origin == origin }?.nonce }
    }

    /// Keeps the `DPoP-Nonce` of `response`, the answer of `url`'s origin, when it is usable.
    /// - Returns: The nonce kept, or `nil`.
    @discardableResult
    func remember(from response: ServerResponse, for url: URL) -> String? {
        guard let nonce = response.value(forHeader: "DPoP-Nonce"), Self.isUsable(nonce), let origin = Self.origin(of: url) else { return nil }
        nonces.withLock { nonces in
            nonces.removeAll { $0.origin == origin }
            nonces.append((origin, nonce))
            if nonces.count > Self.maximumOrigins { nonces.removeFirst() }
        }
        return nonce
    }

    /// 1 to ``maximumLength`` bytes of visible ASCII.
    static func isUsable(_ nonce: String) -> Bool {
        let bytes = nonce.utf8
        return !bytes.isEmpty && bytes.count <= maximumLength && bytes.allSatisfy { (0x21...0x7E).contains($0) }
    }

    /// `scheme://host:port`, lowercased, with the scheme's default port.
    static func origin(of url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
        return "\(scheme)://\(host):\(port)"
    }
}
