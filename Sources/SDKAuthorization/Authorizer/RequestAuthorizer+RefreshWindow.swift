import Foundation
internal import SDKAuthorizationPrimitives

extension Credential {
    /// Something that issues credentials in generations that a logout ends: a provider, or the
    /// `CredentialRefresher` (in the mode kit) a provider keeps its credential in. A request's credential
    /// is noted with the generation it was issued in (by the authorizer, for a provider installed as it
    /// is; by the issuer itself, ``AuthorizationContext/noteIssued(by:generation:)``, behind any
    /// decorator); a rejection that arrives after a logout then fails the request with
    /// ``RequestError/Code/credentialCleared`` instead of refreshing and retrying it, and the retry's
    /// context carries the generation (``AuthorizationContext/requiredGeneration(for:)``) so the
    /// issuer serves it only while that generation is current.
    public protocol Issuer: AnyObject, Sendable {
        /// The generation of the credentials it issues now; a logout or identity change starts a new one.
        var credentialGeneration: UInt64 { get }
    }
}

/// The provider that issued a request's credential, and the generation it was issued in, on a
/// retry's context: the provider the authorizer asked, when it is a ``Credential/Issuer``, and
/// every provider that noted its generation itself (``CredentialIssuance``).
struct IssuedGeneration: Sendable {
    let provider: ObjectIdentifier?
    let generation: UInt64
    /// What the providers of the request noted, whatever wraps them.
    let issuance: CredentialIssuance?

    init(_ provider: any Credential.Issuer, generation: UInt64, issuance: CredentialIssuance? = nil) {
        self.provider = ObjectIdentifier(provider)
        self.generation = generation
        self.issuance = issuance
    }

    /// Only what the request's providers noted themselves.
    init(issuance: CredentialIssuance) {
        self.provider = nil
        self.generation = 0
        self.issuance = issuance
    }

    /// The generation `provider` must still be in to serve the request; `nil` when another
    /// provider issued the credential.
    func generation(for provider: AnyObject) -> UInt64? {
        if let issuer = self.provider, ObjectIdentifier(provider) == issuer { return generation }
        return issuance?.generation(for: provider)
    }
}

/// The generations the providers of one request issued its credential in, noted by each provider
/// itself (``AuthorizationContext/noteIssued(by:generation:)``) and kept for the whole request (its
/// retry, its redirect hops).
final class CredentialIssuance: Sendable {
    private struct Entry {
        let provider: any Credential.Issuer
        let generation: UInt64
    }

    private let entries = Locked<[Entry]>([])

    /// Notes that `provider` issued the request's credential in `generation`; a later note of the
    /// same provider (the retry's) replaces it.
    func note(_ provider: any Credential.Issuer, generation: UInt64) {
        let issuer = ObjectIdentifier(provider)
        entries.withLock { entries in
            entries.removeAll { ObjectIdentifier($0.provider) == issuer }
            entries.append(Entry(provider: provider, generation: generation))
        }
    }

    /// The generation `provider` noted, if it did.
    func generation(for provider: AnyObject) -> UInt64? {
        let issuer = ObjectIdentifier(provider)
        return entries.withLock { entries in entries.last { ObjectIdentifier($0.provider) == issuer }?.generation }
    }

    /// Whether a provider that noted a generation has been logged out since (its generation moved on).
    var isCleared: Bool {
        // Read outside this lock: a provider's generation is under its own.
        let noted = entries.withLock { $0 }
        return noted.contains { $0.provider.credentialGeneration != $0.generation }
    }
}

extension AuthorizationContext {
    /// The authorizer's ``AuthorizationOptions/RefreshWindow``, as a provider that refreshes sees it
    /// (``AuthorizationContext/refreshWindow``): it asks before each refresh it starts, whatever
    /// started it, so the window bounds every refresh, not only those a rejection asked for.
    public struct RefreshWindowGate: Sendable {
        /// The authorizer and the request the gate counts for, in one object made per request (where
        /// two closures made two): "1 prepare" allocations per request.
        ///
        /// Unchecked only for `authorizer`: a weak reference written once, in `init` (`weak let` needs
        /// Swift 6.2; the package builds with 6.0), and only read after; loading a weak reference is
        /// thread-safe.
        final class Counter: @unchecked Sendable {
            private(set) weak var authorizer: RequestAuthorizer?
            let scheme: AuthorizationScheme
            let request: OutgoingRequest
            let endpoint: Endpoint.ID?

            init(authorizer: RequestAuthorizer, scheme: AuthorizationScheme, request: OutgoingRequest, endpoint: Endpoint.ID?) {
                self.authorizer = authorizer
                self.scheme = scheme
                self.request = request
                self.endpoint = endpoint
            }
        }

        private let counter: Counter
        /// The window of the authorizer that made it, which a provider's own count uses too.
        public let window: AuthorizationOptions.RefreshWindow

        init(_ counter: Counter, window: AuthorizationOptions.RefreshWindow) {
            self.counter = counter
            self.window = window
        }

        /// The error a refresh that the provider's own count refuses fails with (its requests fail with
        /// ``RequestError/Code/refreshWindowExceeded``), reported as the authorizer reports its own
        /// refusals.
        public func refuse() -> RequestError {
            let failure = RequestAuthorizer.providerWindowExceeded(window, scheme: counter.scheme, request: counter.request, endpoint: counter.endpoint)
            counter.authorizer?.reportWindowExceeded(failure, scheme: counter.scheme, endpoint: counter.endpoint)
            return failure
        }

        /// `nil` when the window allows one more refresh in place of `credential` (the token the
        /// refresh replaces, if any), which it then counts; otherwise the error the waiting requests
        /// fail with (``RequestError/Code/refreshWindowExceeded``), naming the request whose context
        /// carried this gate.
        public func admitRefresh(replacing credential: Credential?) -> RequestError? {
            // model: admitRefresh
            counter.authorizer?.admitRefresh(scheme: counter.scheme, replacing: credential, request: counter.request, endpoint: counter.endpoint)
        }
    }
}

extension RequestAuthorizer {
    /// The gate that counts `scheme`'s refreshes in this authorizer's window, for `request`: bound to
    /// it, so a provider's refresh start holds the small gate, not the whole context.
    func refreshWindowGate(for scheme: AuthorizationScheme, request: OutgoingRequest, endpoint: Endpoint.ID?) -> AuthorizationContext.RefreshWindowGate {
        AuthorizationContext.RefreshWindowGate(AuthorizationContext.RefreshWindowGate.Counter(authorizer: self, scheme: scheme, request: request, endpoint: endpoint), window: options.refreshWindow)
    }

    /// The refusal of a refresh its provider's own count stops: the provider, whichever clients share
    /// it, refreshed `window`'s number of times within its interval.
    static func providerWindowExceeded(_ window: AuthorizationOptions.RefreshWindow, scheme: AuthorizationScheme, request: OutgoingRequest, endpoint: Endpoint.ID?) -> RequestError {
        var failure = RequestError(.refreshWindowExceeded, "\(AuthorizationContext.name(of: request, endpoint: endpoint)) needs a token refresh, but its provider refreshed \(window.maximumRefreshes) times within \(window.interval) seconds (for every client that shares it); failing instead of refreshing again",
                                   endpoint: endpoint, scheme: scheme)
        failure.wasSent = false
        return failure
    }

}
