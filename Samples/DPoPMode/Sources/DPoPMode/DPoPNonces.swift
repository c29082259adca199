import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit

/// The nonces servers gave (RFC 9449 §8, §9), one per origin, for at most 32 origins (the oldest is
/// dropped). A nonce that is empty, longer than 512 bytes or not visible ASCII is ignored.
final class DPoPNonces: Sendable {
    private let nonces = Locked<[(origin: String, nonce: String)]>([])

    /// The nonce `url`'s origin gave last.
    func nonce(for url: URL) -> String? {
        guard let origin = Self.origin(of: url) else { return nil }
        return nonces.withLock { $0.first { $0.origin == origin }?.nonce }
    }

    /// Keeps the `DPoP-Nonce` of `response`, the answer of `url`'s origin, and returns it, when it is usable.
    @discardableResult
    func remember(from response: ServerResponse, for url: URL) -> String? {
        guard let nonce = response.value(forHeader: "DPoP-Nonce"), (1...512).contains(nonce.utf8.count),
              nonce.utf8.allSatisfy({ (0x21...0x7E).contains($0) }), let origin = Self.origin(of: url)
        else { return nil }
        nonces.withLock { nonces in
            nonces.removeAll { $0.origin == origin }
            nonces.append((origin, nonce))
            if nonces.count > 32 { nonces.removeFirst() }
        }
        return nonce
    }

    /// `scheme://host:port`, lowercased, with the scheme's default port.
    static func origin(of url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
        return "\(scheme)://\(host):\(port)"
    }
}
