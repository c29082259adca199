import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether the test routes (`POST /app/login`, `POST /app/braze-signature`,
/// `PUT /__braze/apps/<appId>/enforcement`, `GET /__records`, `/__redirect`) are served.
///
/// Closed until the server has bound and the bound address is known, so no request is ever
/// answered by a test route on an address that was not checked.
final class TestRouteGate: Sendable {
    private let state = Mutex(false)

    /// Opens (`true`) or keeps closed (`false`) the test routes.
    func open(_ isOpen: Bool) {
        state.withLock { $0 = isOpen }
    }

    /// Whether the test routes are served now.
    var isOpen: Bool {
        state.withLock { $0 }
    }
}

/// Classifies a host name or address literal as loopback or not, without any name resolution.
enum LoopbackAddress {
    /// See ``ReferenceBackend/isLoopback(_:)``.
    static func contains(_ host: String) -> Bool {
        var name = Substring(host)
        if name.hasPrefix("["), name.hasSuffix("]") { name = name.dropFirst().dropLast() }
        if let zone = name.firstIndex(of: "%") { name = name[..<zone] }
        if name.hasSuffix(".") { name = name.dropLast() }
        guard !name.isEmpty else { return false }
        if name.lowercased() == "localhost" { return true }
        if let octets = ipv4(String(name)) { return octets[0] == 127 }
        if let octets = ipv6(String(name)) {
            // ::1
            if octets[0..<15].allSatisfy({ $0 == 0 }) && octets[15] == 1 { return true }
            // ::ffff:127.x.y.z
            if octets[0..<10].allSatisfy({ $0 == 0 }) && octets[10] == 0xFF && octets[11] == 0xFF { return octets[12] == 127 }
            return false
        }
        return false
    }

    /// The four octets of a dotted-quad IPv4 literal (exactly as `inet_pton` reads it).
    private static func ipv4(_ text: String) -> [UInt8]? {
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: &address) { Array($0) }
    }

    /// The sixteen octets of an IPv6 literal (exactly as `inet_pton` reads it).
    private static func ipv6(_ text: String) -> [UInt8]? {
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: &address) { Array($0) }
    }
}
