import Foundation

/// Why a request sent through ``AuthorizedHTTPClient`` did not succeed.
///
/// Descriptions never include a whole credential.
public enum RequestError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The policy holds no endpoint by that name.
    case unknownEndpoint(EndpointID)
    /// The endpoint uses the API-key scheme but the configuration has no authorization.
    case missingProjectAuthorization(endpoint: EndpointID)
    /// The endpoint needs a customer token, but no provider is loaded (advanced auth is disabled,
    /// or the provider failed to load).
    case noProvider(endpoint: EndpointID)
    /// The provider returned `nil` or an empty token; the request was not sent.
    case missingCustomerToken(endpoint: EndpointID)
    /// The provider's token holds a control character (header injection); the request was not sent.
    case invalidCredential(endpoint: EndpointID)
    /// An extra header passed to ``AuthorizedHTTPClient/send(_:body:headers:)`` has a name that is not
    /// an HTTP token or a value with a control character; the request was not sent.
    case invalidHeader(name: String)
    /// The provider threw; the request was not sent.
    case providerFailed(String)
    /// The provider did not deliver a token in time; the request was not sent.
    case credentialTimedOut(endpoint: EndpointID, after: TimeInterval)
    /// The user logged out while the request waited for a token; the request was not sent.
    case credentialCleared(endpoint: EndpointID)
    /// The request's task was cancelled before it was sent.
    case cancelled
    /// The server answered 401 or 403.
    case authorizationRejected(status: Int, scheme: AuthorizationScheme, body: Data)
    /// The server answered another non-2xx status.
    case httpError(status: Int, body: Data)
    /// The request did not reach the server or no response came back.
    case transportFailed(String)
    /// More redirects than the client follows.
    case tooManyRedirects(limit: Int)
    /// The endpoint URL could not be built from the base URL and path template.
    case invalidURL(endpoint: EndpointID)

    public var description: String {
        switch self {
        case .unknownEndpoint(let id):
            "No endpoint named \(id) in the authorization policy"
        case .missingProjectAuthorization(let id):
            "Endpoint \(id) needs the project authorization (API key), but none is configured"
        case .noProvider(let id):
            "Endpoint \(id) needs a customer token, but no authorization provider is loaded"
        case .missingCustomerToken(let id):
            "The authorization provider returned no token for \(id); the request was not sent"
        case .invalidCredential(let id):
            "The authorization provider returned a token with a control character for \(id); the request was not sent"
        case .invalidHeader(let name):
            "The header \(name.debugDescription) has an invalid name or a control character in its value; the request was not sent"
        case .providerFailed(let reason):
            "The authorization provider failed: \(reason)"
        case .credentialTimedOut(let id, let seconds):
            "No token arrived within \(seconds) seconds for \(id); the request was not sent"
        case .credentialCleared(let id):
            "The token was cleared (logout) while \(id) waited for it; the request was not sent"
        case .cancelled:
            "The request was cancelled before it was sent"
        case .authorizationRejected(let status, let scheme, _):
            "The server rejected the \(scheme.rawValue) credential with HTTP \(status)"
        case .httpError(let status, _):
            "The server answered HTTP \(status)"
        case .transportFailed(let reason):
            "The request could not be sent: \(reason)"
        case .tooManyRedirects(let limit):
            "More than \(limit) redirects"
        case .invalidURL(let id):
            "The URL of endpoint \(id) could not be built"
        }
    }
}
