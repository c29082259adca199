import Foundation

/// A provider whose credentials belong to a generation that a logout ends (every provider that
/// keeps its credential in a ``SingleFlight``: its ``SingleFlight/generation``). The authorizer
/// notes the generation a request's credential was issued in; a rejection that arrives after a
/// logout then fails the request with ``RequestError/Code/credentialCleared`` instead of refreshing
/// and retrying it, and the retry's context carries the generation
/// (``AuthorizationContext/issuedGeneration``) so the provider serves it only while that generation
/// is current:
///
/// ```swift
/// let outcome = await refresh.value(deadline: context.deadline,
///                                   generation: context.issuedGeneration?.generation(for: self),
///                                   isUsable: isFresh, join: .wait(start: startRefresh))
/// ```
public protocol GenerationalProvider: AuthorizationProvider, AnyObject {
    /// The generation of the credentials it issues now; a logout or identity change starts a new one.
    var credentialGeneration: UInt64 { get }
}

/// The provider that issued a request's credential, and the generation it was issued in: on a
/// retry's context (``AuthorizationContext/issuedGeneration``).
public struct IssuedGeneration: Sendable {
    let provider: ObjectIdentifier
    let generation: UInt64

    init(_ provider: any GenerationalProvider, generation: UInt64) {
        self.provider = ObjectIdentifier(provider)
        self.generation = generation
    }

    /// The generation `provider` must still be in to serve the request; `nil` when another
    /// provider issued the credential.
    public func generation(for provider: AnyObject) -> UInt64? {
        ObjectIdentifier(provider) == self.provider ? generation : nil
    }
}

/// The authorizer's ``RefreshWindow``, as a provider that refreshes sees it
/// (``AuthorizationContext/refreshWindow``): it asks before each refresh it starts, however the
/// refresh was started (a rejection, a stale mark, an expiry, no token yet), so the window bounds
/// every refresh, not only those a rejection asked for.
public struct RefreshWindowGate: Sendable {
    let admit: @Sendable (_ replacing: Credential?) -> RequestError?

    /// `nil` when the window allows one more refresh in place of `credential` (the token the
    /// refresh replaces, if any), which it then counts; otherwise the error the waiting requests
    /// fail with (``RequestError/Code/refreshWindowExceeded``), naming the request whose context
    /// carried this gate.
    public func admitRefresh(replacing credential: Credential?) -> RequestError? {
        // model: admitRefresh
        admit(credential)
    }
}

extension RequestAuthorizer {
    /// The gate that counts `scheme`'s refreshes in this authorizer's window, for `request`: bound to
    /// it, so a provider's refresh start holds the small gate, not the whole context.
    func refreshWindowGate(for scheme: AuthorizationScheme, request: OutgoingRequest, endpoint: EndpointID?) -> RefreshWindowGate {
        RefreshWindowGate { [weak self] replacing in
            self?.admitRefresh(scheme: scheme, replacing: replacing, request: request, endpoint: endpoint)
        }
    }
}
