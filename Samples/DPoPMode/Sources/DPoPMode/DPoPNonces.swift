import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit

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
