import Foundation
internal import SDKAuthorizationPrimitives

extension AuthorizationOptions {
    /// A cap on refreshes: at most ``maximumRefreshes`` within ``interval`` seconds for each scheme;
    /// past it, requests fail with ``RequestError/Code/refreshWindowExceeded`` instead of refreshing
    /// again. It stops a server that rejects every new token from turning each request into a refresh
    /// loop (Alamofire's `AuthorizationOptions.RefreshWindow`).
    ///
    /// Every provider built on `CredentialRefresher` (in the mode kit: `RefreshingTokenProvider`, the ID
    /// token store, the token exchange) counts every refresh it starts, whatever started it: no token
    /// yet, an expiry, a token marked stale by a rejection. The refresher also keeps its own count: a
    /// provider shared by several clients refreshes no more than one window allows, not one window per client.
    /// For a provider of your own, the authorizer counts each rejected credential that gets a retry.
    public struct RefreshWindow: Sendable, Equatable {
        /// How many refreshes the window allows.
        public var maximumRefreshes: Int
        /// The window's length in seconds, on the monotonic clock.
        public var interval: TimeInterval

        /// Creates a window; the default allows 5 refreshes in 30 seconds.
        public init(maximumRefreshes: Int = 5, interval: TimeInterval = 30) {
            self.maximumRefreshes = maximumRefreshes
            self.interval = interval
        }
    }
}

/// The limits of authorizing and sending one request.
///
/// | option | default | |
/// | --- | --- | --- |
/// | ``refreshWindow`` | 5 in 30 s | refreshes (however started) before requests fail instead |
/// | ``redirectLimit`` | 5 | redirects one request follows (0 to 20) |
/// | ``sensitiveHeaderNames`` | empty | caller headers dropped on a redirect to another origin, beside `Authorization`, `Cookie`, `Proxy-Authorization` and every credential header, even when also forwarded |
/// | ``forwardedHeaderNames`` | empty | caller headers that follow a redirect to another origin beside the safelist (`Accept`, `User-Agent`...) |
/// | ``requestDeadline`` | 60 s | the whole request: waiting for a credential, every attempt and redirect (up to 1 day) |
public struct AuthorizationOptions: Sendable, Equatable {
    /// The refresh window.
    public var refreshWindow: AuthorizationOptions.RefreshWindow
    /// How many redirects one request follows.
    public var redirectLimit: Int
    /// Caller header names (any case) that must not follow a redirect to another origin.
    public var sensitiveHeaderNames: Set<String>
    /// Caller header names (any case) that follow a redirect to another origin (scheme, host or
    /// port) beside the safelist every such redirect keeps: `Accept`, `Accept-Language`,
    /// `Accept-Encoding`, `User-Agent`, `Cache-Control`, `Pragma`, `If-None-Match`,
    /// `If-Modified-Since`, and `Content-Type` and `Content-Language` when the redirected request has
    /// a body. Every other caller header stays behind, so an `X-Api-Key` of the caller's own never
    /// reaches a host the SDK author did not name. Name more here, e.g. `["X-Request-ID"]`; a
    /// credential header or one of the ``sensitiveHeaderNames`` is dropped all the same.
    ///
    /// Each name must be an HTTP field name and not one the transport owns (`Host`,
    /// `Content-Length`, `Connection`, `Proxy-*`...); ``RequestAuthorizer`` refuses others with
    /// ``ConfigurationError/invalidValue(key:reason:)``. Redirects within the origin keep every header.
    public var forwardedHeaderNames: Set<String>
    /// Seconds one request may take from start to end, on the monotonic clock.
    public var requestDeadline: TimeInterval
    /// How many calls into one provider or transport may still run after their requests gave up on
    /// them (their deadline or a cancellation came first) before the next request that needs it
    /// fails at once with ``RequestError/Code/tooManyAbandonedCalls``. Each holds a task, perhaps a
    /// thread, and the request it was handed with its body; 64 bounds them to a few MiB.
    var abandonedCallLimit = 64

    /// Creates options; each parameter is the property of the same name.
    public init(
        refreshWindow: AuthorizationOptions.RefreshWindow = AuthorizationOptions.RefreshWindow(),
        redirectLimit: Int = 5,
        sensitiveHeaderNames: Set<String> = [],
        forwardedHeaderNames: Set<String> = [],
        requestDeadline: TimeInterval = 60
    ) {
        self.forwardedHeaderNames = forwardedHeaderNames
        self.refreshWindow = refreshWindow
        self.redirectLimit = redirectLimit
        self.sensitiveHeaderNames = sensitiveHeaderNames
        self.requestDeadline = requestDeadline
    }

    /// The largest number of seconds any duration option accepts (one day).
    public static let maximumSeconds: TimeInterval = 86_400

    /// The header names always dropped on a redirect to another origin.
    static let alwaysSensitiveHeaderNames: Set<String> = ["authorization", "cookie", "cookie2", "proxy-authorization", "www-authenticate"]

    /// The caller headers (lower case) a redirect to another origin forwards whatever the options.
    static let crossOriginSafelistedHeaderNames: Set<String> = [
        "accept", "accept-language", "accept-encoding", "user-agent", "cache-control", "pragma", "if-none-match", "if-modified-since",
    ]

    /// The caller headers (lower case) a redirect to another origin forwards when the redirected
    /// request has a body.
    static let crossOriginSafelistedBodyHeaderNames: Set<String> = ["content-type", "content-language"]

    /// - Throws: ``ConfigurationError/invalidValue(key:reason:)`` naming the first value out of range.
    func validated() throws(ConfigurationError) -> AuthorizationOptions {
        guard (1...1_000).contains(refreshWindow.maximumRefreshes) else {
            throw .invalidValue(key: "refreshWindow.maximumRefreshes", reason: "must be from 1 to 1000")
        }
        guard refreshWindow.interval.isFinite, refreshWindow.interval > 0, refreshWindow.interval <= 86_400 else {
            throw .invalidValue(key: "refreshWindow.interval", reason: "must be more than 0 and at most 86400 seconds")
        }
        guard (0...20).contains(redirectLimit) else {
            throw .invalidValue(key: "redirectLimit", reason: "must be from 0 to 20")
        }
        guard requestDeadline.isFinite, requestDeadline > 0, requestDeadline <= 86_400 else {
            throw .invalidValue(key: "requestDeadline", reason: "must be more than 0 and at most 86400 seconds")
        }
        for name in sensitiveHeaderNames where !HeaderFieldRules.isValidName(name) {
            throw .invalidValue(key: "sensitiveHeaderNames", reason: "\(String(name.prefix(64)).debugDescription) is not a header name")
        }
        for name in forwardedHeaderNames.sorted() {
            guard HeaderFieldRules.isValidName(name) else {
                throw .invalidValue(key: "forwardedHeaderNames", reason: "\(LogText.escaped(name, limit: 64)) is not a header name")
            }
            guard !HeaderFieldRules.isTransportOwnedName(name) else {
                throw .invalidValue(key: "forwardedHeaderNames", reason: "\(LogText.escaped(name, limit: 64)) is a header the transport owns; it is never forwarded")
            }
        }
        return self
    }
}
