import Foundation
internal import SDKAuthorizationPrimitives

/// The calls into each provider or transport that requests gave up on (at their deadline or a
/// cancellation, ``Alarms/untilDeadline(_:endpoint:_:)``) and that still run. Past ``limit`` for
/// one provider or transport, the requests that need it fail at once
/// (``RequestError/Code/tooManyAbandonedCalls``) instead of adding one more; a call that ends at
/// last frees its place.
///
/// One per ``RequestAuthorizer``: a provider or transport is counted by its object when it is one,
/// otherwise by the scheme it serves (a provider) or its type (a transport).
final class AbandonedCalls: Sendable {
    /// What the calls go into.
    enum Callee: Hashable, Sendable {
        case object(ObjectIdentifier)
        case provider(scheme: String)
        /// A transport that is not an object, by its type (its metatype's identity: no name is built per request).
        case transport(type: ObjectIdentifier)

        /// `provider`, the provider of `scheme`.
        static func provider(_ provider: any AuthorizationProvider, scheme: AuthorizationScheme) -> Callee {
            type(of: provider) is AnyClass ? .object(ObjectIdentifier(provider as AnyObject)) : .provider(scheme: scheme.rawValue)
        }

        static func transport(_ transport: any HTTPTransport) -> Callee {
            type(of: transport) is AnyClass ? .object(ObjectIdentifier(transport as AnyObject)) : .transport(type: ObjectIdentifier(type(of: transport)))
        }
    }

    /// How many abandoned calls one callee may have running before its requests fail at once.
    let limit: Int
    private let counts = Locked([Callee: Int]())

    init(limit: Int) {
        self.limit = limit
    }

    /// Whether `callee` has ``limit`` abandoned calls still running.
    func isFull(_ callee: Callee) -> Bool {
        counts.withLock { ($0[callee] ?? 0) >= limit }
    }

    /// Abandoned calls still running, all callees together (for tests).
    var running: Int {
        counts.withLock { $0.values.reduce(0, +) }
    }

    func add(_ callee: Callee) {
        counts.withLock { $0[callee, default: 0] += 1 }
    }

    func remove(_ callee: Callee) {
        counts.withLock { counts in
            guard let count = counts[callee] else { return }
            counts[callee] = count > 1 ? count - 1 : nil
        }
    }
}
