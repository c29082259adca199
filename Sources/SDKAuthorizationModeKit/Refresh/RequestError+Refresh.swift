import Foundation
import SDKAuthorization

// The codes of a refresh: the refresher (`CredentialRefresher`, `RefreshingTokenProvider`) lives in
// this kit, and so do the errors only it throws. The core's refresh window
// (`refreshWindowExceeded`) stays with the authorizer, which counts the refreshes.

extension RequestError.Code {
    /// No token arrived in time. Not sent.
    public static let credentialTimedOut = RequestError.Code(rawValue: "credentialTimedOut")
    /// The app's refresh callback threw while the request waited for a token. Not sent.
    public static let refreshFailed = RequestError.Code(rawValue: "refreshFailed")
    /// A refresh delivered a token that had already expired when it arrived: the requests that
    /// waited for it fail instead of refreshing again in a loop. Not sent.
    public static let refreshedCredentialExpired = RequestError.Code(rawValue: "refreshedCredentialExpired")
    /// A refresh sent a request that needs the credential it is fetching (through the client it
    /// refreshes for): that request fails at once instead of waiting for itself (a refresh that
    /// waits for it fails with it). A request in a `Task { }` the refresh starts inherits the
    /// refresh's mark and fails the same way, even when the refresh does not wait for it: start
    /// such a request with `Task.detached`. Not sent.
    public static let refreshWaitsForItself = RequestError.Code(rawValue: "refreshWaitsForItself")
}

extension RequestError {
    private static func name(_ endpoint: Endpoint.ID?) -> String { endpoint.map { "\($0)" } ?? requestPlaceholder }

    /// The provider did not deliver a token in time.
    public static func credentialTimedOut(endpoint: Endpoint.ID?, after seconds: TimeInterval) -> RequestError {
        RequestError(.credentialTimedOut, "No token arrived within \(seconds) seconds for \(name(endpoint)); the request was not sent", endpoint: endpoint)
    }

    /// The app's refresh callback threw `error`.
    ///
    /// When `error` is already one of the refusals a refresh ends with before any refresh ran or
    /// after it (the core's `refreshWindowExceeded`, ``RequestError/Code/refreshedCredentialExpired``,
    /// ``RequestError/Code/refreshWaitsForItself``), that error is returned as it is, for `endpoint`.
    public static func refreshFailed(_ error: any Error, endpoint: Endpoint.ID?) -> RequestError {
        if let refusal = error as? RequestError, [.refreshWindowExceeded, .refreshedCredentialExpired, .refreshWaitsForItself].contains(refusal.code) {
            return refusal.withEndpoint(endpoint)
        }
        return RequestError(.refreshFailed, "The app's token refresh failed (\(type(of: error))) while \(name(endpoint)) waited for it; the request was not sent", endpoint: endpoint, underlyingError: error)
    }

    /// A refresh delivered a token that had already expired when it arrived.
    public static func refreshedCredentialExpired(endpoint: Endpoint.ID?) -> RequestError {
        RequestError(.refreshedCredentialExpired, "The app's token refresh returned a token that had already expired while \(name(endpoint)) waited for it; the request was not sent", endpoint: endpoint)
    }

    /// A request sent by a refresh needs the credential that refresh is fetching.
    public static func refreshWaitsForItself(endpoint: Endpoint.ID?) -> RequestError {
        RequestError(.refreshWaitsForItself, "\(name(endpoint)) needs the credential that its own refresh is fetching (the refresh, or a task it started, sent it through the client it refreshes for), so it would wait for itself; it fails at once. Send the refresh's requests without this credential: a rule with scheme .none for the token endpoint, or another client; start a request the refresh does not wait for with Task.detached", endpoint: endpoint)
    }
}
