import Foundation

/// A provider whose credentials belong to a generation that a logout ends (the built-in providers
/// that keep their credential in a `SingleFlight`). The authorizer notes the generation a request's
/// credential was issued in; a rejection that arrives after a logout then fails the request with
/// ``RequestError/Code/credentialCleared`` instead of refreshing and retrying it.
protocol GenerationalProvider: AuthorizationProvider, AnyObject {
    /// The generation of the credentials it issues now; a logout or identity change starts a new one.
    var credentialGeneration: UInt64 { get }
}

/// The provider that issued a request's credential, and the generation it was issued in.
struct IssuedGeneration: Sendable {
    let provider: ObjectIdentifier
    let generation: UInt64

    init(_ provider: any GenerationalProvider, generation: UInt64) {
        self.provider = ObjectIdentifier(provider)
        self.generation = generation
    }

    /// The generation `provider` must still be in to serve the request; `nil` when another
    /// provider issued the credential.
    func generation(for provider: AnyObject) -> UInt64? {
        ObjectIdentifier(provider) == self.provider ? generation : nil
    }
}

/// The authorizer's ``RefreshWindow``, as a built-in provider sees it: it asks before each refresh
/// it starts, however the refresh was started (a rejection, a stale mark, an expiry, no token yet).
struct RefreshWindowGate: Sendable {
    let admit: @Sendable (_ replacing: Credential?, _ context: AuthorizationContext) -> RequestError?

    /// `nil` when the window allows one more refresh in place of `credential` (the token the
    /// refresh replaces, if any), which it then counts; otherwise the error the waiting requests
    /// fail with (``RequestError/Code/refreshWindowExceeded``).
    func admitRefresh(replacing credential: Credential?, for context: AuthorizationContext) -> RequestError? {
        admit(credential, context)
    }
}

extension RequestAuthorizer {
    /// The gate that counts `scheme`'s refreshes in this authorizer's window.
    func refreshWindowGate(for scheme: AuthorizationScheme) -> RefreshWindowGate {
        RefreshWindowGate { [weak self] replacing, context in
            self?.admitRefresh(scheme: scheme, replacing: replacing, for: context)
        }
    }
}
