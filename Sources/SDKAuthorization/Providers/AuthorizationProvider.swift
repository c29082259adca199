import Foundation

/// What the client knows about the request it wants a credential for.
public struct AuthorizationContext: Sendable, Equatable {
    /// The endpoint being called.
    public let endpoint: EndpointID
    /// The full URL the request goes to.
    public let url: URL
    /// 1 for the first try; 2 for the single retry after a rejected credential.
    public let attempt: Int

    /// Creates a context.
    public init(endpoint: EndpointID, url: URL, attempt: Int = 1) {
        self.endpoint = endpoint
        self.url = url
        self.attempt = attempt
    }
}

/// What a provider answers for one request.
public enum Credential: Sendable, Hashable, CustomStringConvertible {
    /// Send `Authorization: Bearer <token>`.
    case token(String)
    /// Deliberately send this request without an `Authorization` header (for example a host that
    /// must never see the token).
    case omitted

    public var description: String {
        switch self {
        case .token(let token): "token \(Redaction.redact(token))"
        case .omitted: "omitted"
        }
    }
}

/// What to do after the server rejected a request's credential with 401 or 403.
public enum RejectionDecision: Sendable, Equatable {
    /// Fail the request with ``RequestError/authorizationRejected(status:scheme:body:)``.
    case fail
    /// Ask the provider again and send the request once more. A request is retried at most once.
    case retry
}

/// Supplies the bearer credential for requests, one call per request.
///
/// This is the native, asynchronous provider shape. For the Exponea-compatible synchronous shape,
/// see ``AuthorizationProviderType``.
///
/// ```swift
/// struct SessionTokenProvider: AuthorizationProvider {
///     let session: UserSession
///     func credential(for context: AuthorizationContext) async throws -> Credential {
///         .token(try await session.currentJWT())
///     }
/// }
/// ```
///
/// # Implementation requirements
/// `credential(for:)` is called concurrently from many tasks; it must not block a thread (await
/// instead) and should honour task cancellation. An error it throws fails that request with
/// ``RequestError/providerFailed(_:)``; nothing is sent.
public protocol AuthorizationProvider: Sendable {
    /// The credential for one request.
    func credential(for context: AuthorizationContext) async throws -> Credential

    /// Called when the server answered `status` (401 or 403) to a request that carried `credential`.
    /// The default answers ``RejectionDecision/fail``.
    func credentialRejected(_ credential: String, status: Int, for context: AuthorizationContext) async -> RejectionDecision

    /// Called when the app's user identity changes (a new customer, `anonymize`): drop anything
    /// cached for the old identity. The default does nothing.
    func identityDidChange() async
}

extension AuthorizationProvider {
    public func credentialRejected(_ credential: String, status: Int, for context: AuthorizationContext) async -> RejectionDecision {
        .fail
    }

    public func identityDidChange() async {}
}
