import Foundation
internal import SDKAuthorizationPrimitives

/// Why a request was not authorized, not sent, or not answered with success.
///
/// Its ``Code`` is a struct rather than an enum (``ErrorShape/Code``), as swift-openapi-runtime's
/// `ClientError`'s is: later modes add codes (a signature mode's queue, an exchange mode's signing
/// callback), and every error keeps the same context, the underlying error itself (not only its
/// description) included.
///
/// ```swift
/// do {
///     let response = try await client.send(.appInboxFetch, body: body)
/// } catch where error.code == .authorizationRejected {
///     showLogin(reason: error.response?.value(forHeader: "WWW-Authenticate"))
/// } catch {
///     logger.warning("inbox failed: \(error)")   // never holds a whole credential
/// }
/// ```
///
/// It has the shape every error of the framework has (``ErrorShape/Coded``), and shows and compares
/// more: its debug text adds the response and whether it was sent, and two errors are equal when
/// their code, endpoint, status, scheme and response body are equal (not their message, underlying
/// error, response header fields or ``wasSent``).
public struct RequestError: ErrorShape.Coded {
    /// What went wrong, as a stable name a caller can match on.
    public struct Code: ErrorShape.Code {
        /// The code's name.
        public let rawValue: String
        /// Creates a code.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The policy holds no endpoint by that name. Not sent.
        public static let unknownEndpoint = Code(rawValue: "unknownEndpoint")
        /// The URL could not be built (a path parameter is missing or is `.` or `..`). Not sent.
        public static let invalidURL = Code(rawValue: "invalidURL")
        /// A rule or endpoint that scopes a credential to some paths matched a path a server may
        /// resolve outside them (an encoded `/`, `\` or `.`, `..;`, a double encoding...). Not sent.
        public static let ambiguousPath = Code(rawValue: "ambiguousPath")
        /// The policy names a scheme for which no provider is installed. Not sent.
        public static let noProvider = Code(rawValue: "noProvider")
        /// The provider's credential is empty or blank. Not sent.
        public static let emptyCredential = Code(rawValue: "emptyCredential")
        /// The provider's credential cannot go into a header (CR, LF, non-ASCII, not a `b64token`). Not sent.
        public static let invalidCredential = Code(rawValue: "invalidCredential")
        /// A caller's header field has an invalid name or value. Not sent.
        public static let invalidHeader = Code(rawValue: "invalidHeader")
        /// The provider threw; ``RequestError/underlyingError`` holds what. Not sent.
        public static let providerFailed = Code(rawValue: "providerFailed")
        /// The user logged out while the request waited for a token (not sent), or after it was
        /// sent with a token and before that token's rejection came back (not sent again); or the
        /// identity changed without naming the new user, and the provider keeps its token per user
        /// (``RequestError/noUserNamed(endpoint:)``; not sent).
        public static let credentialCleared = Code(rawValue: "credentialCleared")
        /// More refreshes than the refresh window allows: the request fails instead of looping.
        public static let refreshWindowExceeded = Code(rawValue: "refreshWindowExceeded")
        /// The request's task was cancelled.
        public static let cancelled = Code(rawValue: "cancelled")
        /// The request's overall deadline passed.
        public static let deadlineExceeded = Code(rawValue: "deadlineExceeded")
        /// Too many earlier calls into the provider or transport this request needs are still
        /// running after their requests gave up on them (at their deadline or a cancellation): a
        /// provider or transport that never answers. The request fails at once instead of adding
        /// one more; once those calls end, requests go through again. Not sent.
        public static let tooManyAbandonedCalls = Code(rawValue: "tooManyAbandonedCalls")
        /// The server answered 401 or 403.
        public static let authorizationRejected = Code(rawValue: "authorizationRejected")
        /// The server answered another non-2xx status.
        public static let httpError = Code(rawValue: "httpError")
        /// The request did not reach the server or no response came back.
        public static let transportFailed = Code(rawValue: "transportFailed")
        /// More redirects than the limit.
        public static let tooManyRedirects = Code(rawValue: "tooManyRedirects")
        /// A redirect that is not followed: to another origin with a body (307/308), or to a scheme other than http(s).
        public static let redirectRefused = Code(rawValue: "redirectRefused")
    }

    /// Everything but `wasSent`, in one shared box: an error is one reference and a flag wide, so
    /// every async frame that may throw it (each holds room for one) stays small.
    private final class Storage: Sendable {
        let code: Code
        let endpoint: Endpoint.ID?
        let scheme: AuthorizationScheme?
        let response: ServerResponse?
        let underlyingError: (any Error)?
        /// The sentence, with ``RequestError/requestPlaceholder`` where the request is named.
        let template: String
        /// The request as method and URL (no query, no user information), once the loop named it.
        let requestName: String?

        init(code: Code, endpoint: Endpoint.ID?, scheme: AuthorizationScheme?, response: ServerResponse?, underlyingError: (any Error)?,
             template: String, requestName: String? = nil) {
            self.code = code
            self.endpoint = endpoint
            self.scheme = scheme
            self.response = response
            self.underlyingError = underlyingError
            self.template = template
            self.requestName = requestName
        }
    }

    private var storage: Storage

    /// What went wrong.
    public var code: Code { storage.code }
    /// The endpoint's name, when the request was made from the policy's catalogue.
    public var endpoint: Endpoint.ID? { storage.endpoint }
    /// Whether any attempt of the request reached the transport.
    public internal(set) var wasSent: Bool
    /// The scheme whose credential was concerned, when one was.
    public var scheme: AuthorizationScheme? { storage.scheme }
    /// The server's response (status, header fields, body), when there was one.
    public var response: ServerResponse? { storage.response }
    /// The error behind this one: the provider's, the transport's, the refresh callback's.
    public var underlyingError: (any Error)? { storage.underlyingError }
    /// The ``message``, the request named where the template holds ``requestPlaceholder``.
    var detail: String {
        guard storage.template.contains(Self.requestPlaceholder) else { return storage.template }
        return storage.template.replacingOccurrences(of: Self.requestPlaceholder, with: storage.requestName ?? "the request")
    }

    /// Where a sentence names a request that has no endpoint: the request loop fills in its method
    /// and URL (without the query), or "the request" before the loop has seen it. A mode's own
    /// error writes it where it names the request, as the core's errors do:
    ///
    /// ```swift
    /// RequestError(.partnerTokenMissing, "No partner token for \(endpoint.map { "\($0)" } ?? RequestError.requestPlaceholder)", endpoint: endpoint)
    /// ```
    public static let requestPlaceholder = "\u{FFFC}request\u{FFFC}"

    /// Creates an error: how a mode (or any provider) reports a failure with one of the framework's
    /// codes or a code of its own (``Code`` is extensible). `detail` is the ``message``: never a
    /// credential, and text from outside escaped with `LogText` (mode kit). Each other parameter is
    /// the property of the same name; ``withEndpoint(_:)`` adds an endpoint later, and a caller
    /// retries a request that was not sent more readily, so say `wasSent: true` whenever it may have been.
    public init(_ code: Code, _ detail: String, endpoint: Endpoint.ID? = nil, wasSent: Bool = false, scheme: AuthorizationScheme? = nil,
         response: ServerResponse? = nil, underlyingError: (any Error)? = nil) {
        storage = Storage(code: code, endpoint: endpoint, scheme: scheme, response: response, underlyingError: underlyingError, template: detail)
        self.wasSent = wasSent
    }

    /// This error with `response` as its server's answer, when it has none (a refresh that failed
    /// after the server rejected the request: the caller gets the rejection, `WWW-Authenticate` and all).
    func answered(by response: ServerResponse) -> RequestError {
        guard storage.response == nil else { return self }
        var answered = self
        answered.storage = Storage(code: code, endpoint: endpoint, scheme: scheme ?? storage.scheme, response: response, underlyingError: underlyingError,
                                   template: storage.template, requestName: storage.requestName)
        return answered
    }

    /// This error with `request` named in its sentence (method and URL, without the URL's query or
    /// user information), when it names no endpoint and no request yet.
    func naming(_ request: OutgoingRequest) -> RequestError {
        guard endpoint == nil, storage.requestName == nil, storage.template.contains(Self.requestPlaceholder) else { return self }
        var named = RequestError(code, "", endpoint: endpoint, wasSent: wasSent, scheme: scheme, response: response, underlyingError: underlyingError)
        named.storage = Storage(code: code, endpoint: endpoint, scheme: scheme, response: response, underlyingError: underlyingError,
                                template: storage.template, requestName: AuthorizationContext.name(of: request, endpoint: nil))
        return named
    }

    /// The longest message of an error an app's provider or signer makes, in characters.
    static let maximumForeignDetailLength = 500

    /// The error with its message made safe to log, for an error that app code (a provider, a
    /// signer) made and the framework passes on: cut at 500 characters, with control characters,
    /// line separators and bidirectional controls escaped. The same error when it is safe already.
    public func sanitized() -> RequestError {
        let safe = LogText.readable(detail, limit: Self.maximumForeignDetailLength)
        guard safe != detail else { return self }
        return RequestError(code, safe, endpoint: endpoint, wasSent: wasSent, scheme: scheme, response: response, underlyingError: underlyingError)
    }

    /// The response's status code, when there was a response: the same name as
    /// ``ServerResponse/statusCode``.
    public var statusCode: Int? { response?.statusCode }

    /// The response's status code, when there was a response.
    @available(*, deprecated, renamed: "statusCode")
    public var status: Int? { statusCode }
    /// The response's body, or empty data.
    public var body: Data { response?.body ?? Data() }

    public static func == (lhs: RequestError, rhs: RequestError) -> Bool {
        lhs.code == rhs.code && lhs.endpoint == rhs.endpoint && lhs.statusCode == rhs.statusCode
            && lhs.scheme == rhs.scheme && lhs.response?.body == rhs.response?.body
    }

    /// A sentence that says what happened; never a whole credential. It is also the error's
    /// `description` and `errorDescription` (what `localizedDescription` shows).
    public var message: String { detail }

    /// Code, endpoint, status and whether it was sent; the underlying error shows its type only,
    /// since an app's error may hold a token.
    public var customMirror: Mirror {
        Mirror(self, children: [
            "code": code.rawValue, "endpoint": endpoint?.rawValue ?? "none", "statusCode": statusCode ?? 0, "wasSent": wasSent,
            "underlyingError": underlyingError.map { RequestError.summary(of: $0) } ?? "none", "detail": detail,
        ], displayStyle: .struct)
    }

    public var debugDescription: String {
        var text = "RequestError(\(code)): \(detail)"
        if let response { text += " [\(response)]" }
        if wasSent { text += " [sent]" }
        return text
    }

    private static func name(_ endpoint: Endpoint.ID?) -> String { endpoint.map { "\($0)" } ?? requestPlaceholder }

    /// The error's type and, for a `URLError`, its code: never its description, which may hold a URL
    /// with secrets in its query.
    public static func summary(of error: any Error) -> String {
        if let urlError = error as? URLError { return "URLError \(urlError.code.rawValue)" }
        return "\(type(of: error))"
    }
}

// MARK: - Making errors

extension RequestError {
    /// The policy holds no endpoint by that name.
    public static func unknownEndpoint(_ id: Endpoint.ID) -> RequestError {
        RequestError(.unknownEndpoint, "No endpoint named \(id) in the authorization policy", endpoint: id)
    }

    /// The URL of an endpoint could not be built.
    public static func invalidURL(endpoint: Endpoint.ID?, reason: String = "the URL could not be built") -> RequestError {
        RequestError(.invalidURL, "The URL of \(name(endpoint)) could not be built: \(reason)", endpoint: endpoint)
    }

    /// A rule or endpoint whose path pattern is `scope` matched `method` `url`, whose path a server
    /// may resolve outside `scope`; no credential was attached. Names the URL without its user
    /// information or query.
    public static func ambiguousPath(method: String, url: URL, scope: String, scheme: AuthorizationScheme, endpoint: Endpoint.ID? = nil) -> RequestError {
        let request = LogText.readable("\(method.uppercased()) \(LogText.url(url))", limit: 300)
        return RequestError(.ambiguousPath, "\(request) was not sent: its path holds a spelling servers resolve differently (an encoded '/' or '.', a '\\', a ';' on a dot segment, a double encoding, bytes that are not UTF-8, or '//' with '..'), so it may reach a path outside '\(LogText.readable(scope, limit: 200))', which its \(scheme) credential is scoped to", endpoint: endpoint, scheme: scheme)
    }

    /// No provider is installed for the scheme the policy names.
    public static func noProvider(endpoint: Endpoint.ID?, scheme: AuthorizationScheme = .bearer) -> RequestError {
        RequestError(.noProvider, "\(name(endpoint)) needs a \(scheme) credential, but no authorization provider is loaded for it", endpoint: endpoint, scheme: scheme)
    }

    /// The provider's credential is empty or blank.
    public static func emptyCredential(endpoint: Endpoint.ID?) -> RequestError {
        RequestError(.emptyCredential, "The authorization provider returned an empty credential for \(name(endpoint)); the request was not sent", endpoint: endpoint)
    }

    /// The provider's credential cannot go into a header.
    public static func invalidCredential(endpoint: Endpoint.ID?) -> RequestError {
        RequestError(.invalidCredential, "The authorization provider returned a credential that cannot go into an HTTP header (a control character, non-ASCII, or not a bearer token) for \(name(endpoint)); the request was not sent", endpoint: endpoint)
    }

    /// A caller's header field has an invalid name or value.
    public static func invalidHeader(name: String) -> RequestError {
        RequestError(.invalidHeader, "The header \(String(name.prefix(64)).debugDescription) has an invalid name or a character a header value cannot hold; the request was not sent")
    }

    /// The provider threw `error`.
    public static func providerFailed(_ error: any Error, endpoint: Endpoint.ID?) -> RequestError {
        RequestError(.providerFailed, "The authorization provider failed for \(name(endpoint)): \(type(of: error))", endpoint: endpoint, underlyingError: error)
    }

    /// The user logged out while the request waited for a token.
    public static func credentialCleared(endpoint: Endpoint.ID?) -> RequestError {
        RequestError(.credentialCleared, "The token was cleared (logout) while \(name(endpoint)) waited for it; the request was not sent", endpoint: endpoint)
    }

    /// The provider keeps its credentials per user in a `CredentialStore`, and the app has named
    /// no user since the identity changed (``AuthorizedHTTPClient/identityDidChange(to:)`` with
    /// `nil`): nothing is fetched or stored for an unknown user. Code ``Code/credentialCleared``.
    public static func noUserNamed(endpoint: Endpoint.ID?) -> RequestError {
        RequestError(.credentialCleared, "No user is named since the identity changed, and the provider of \(name(endpoint)) keeps its token per user; the request was not sent: name the new user with identityDidChange(to:)", endpoint: endpoint)
    }

    /// More refreshes than the window allows.
    public static func refreshWindowExceeded(endpoint: Endpoint.ID?, scheme: AuthorizationScheme, window: AuthorizationOptions.RefreshWindow, response: ServerResponse?) -> RequestError {
        RequestError(.refreshWindowExceeded, "\(name(endpoint)) was rejected again after \(window.maximumRefreshes) refreshes within \(window.interval) seconds; failing instead of refreshing again", endpoint: endpoint, wasSent: true, scheme: scheme, response: response)
    }

    /// The request's task was cancelled.
    public static var cancelled: RequestError {
        RequestError(.cancelled, "The request was cancelled")
    }

    /// ``Code/tooManyAbandonedCalls``: `limit` calls into `callee` (named in words) still run after
    /// their requests gave up on them.
    static func tooManyAbandonedCalls(into callee: String, limit: Int, endpoint: Endpoint.ID?, scheme: AuthorizationScheme?) -> RequestError {
        RequestError(.tooManyAbandonedCalls, "\(name(endpoint)) was not sent: \(limit) calls into \(callee) that earlier requests gave up on (deadline or cancellation) are still running; failing at once instead of adding another",
                     endpoint: endpoint, wasSent: false, scheme: scheme)
    }

    /// The request's overall deadline passed.
    public static func deadlineExceeded(endpoint: Endpoint.ID?, after seconds: TimeInterval) -> RequestError {
        RequestError(.deadlineExceeded, "\(name(endpoint)) did not complete within its deadline of \(seconds) seconds", endpoint: endpoint)
    }

    /// The server answered 401 or 403.
    public static func authorizationRejected(response: ServerResponse, scheme: AuthorizationScheme, endpoint: Endpoint.ID? = nil) -> RequestError {
        let sentence = scheme == .none
            ? "The server answered HTTP \(response.statusCode) to \(name(endpoint)), and no credential was sent: no endpoint or rule of the policy gives it a scheme"
            : "The server rejected the \(scheme) credential of \(name(endpoint)) with HTTP \(response.statusCode)"
        return RequestError(.authorizationRejected, sentence, endpoint: endpoint, wasSent: true, scheme: scheme, response: response)
    }

    /// The server answered 401 or 403 (a shorthand for tests and pattern checks).
    public static func authorizationRejected(status: Int, scheme: AuthorizationScheme, body: Data, endpoint: Endpoint.ID? = nil) -> RequestError {
        authorizationRejected(response: ServerResponse(statusCode: status, body: body), scheme: scheme, endpoint: endpoint)
    }

    /// The server answered another non-2xx status.
    public static func httpError(response: ServerResponse, endpoint: Endpoint.ID? = nil) -> RequestError {
        RequestError(.httpError, "The server answered HTTP \(response.statusCode) to \(name(endpoint))", endpoint: endpoint, wasSent: true, response: response)
    }

    /// The server answered another non-2xx status (a shorthand for tests and pattern checks).
    public static func httpError(status: Int, body: Data, endpoint: Endpoint.ID? = nil) -> RequestError {
        httpError(response: ServerResponse(statusCode: status, body: body), endpoint: endpoint)
    }

    /// The request did not reach the server or no response came back.
    public static func transportFailed(_ error: any Error, endpoint: Endpoint.ID? = nil) -> RequestError {
        RequestError(.transportFailed, "\(name(endpoint)) could not be sent: \(summary(of: error))", endpoint: endpoint, wasSent: true, underlyingError: error)
    }

    /// More redirects than the limit.
    public static func tooManyRedirects(limit: Int, endpoint: Endpoint.ID? = nil) -> RequestError {
        RequestError(.tooManyRedirects, "\(name(endpoint)) was redirected more than \(limit) times", endpoint: endpoint, wasSent: true)
    }

    /// A redirect that is not followed.
    public static func redirectRefused(_ reason: String, response: ServerResponse, endpoint: Endpoint.ID? = nil) -> RequestError {
        RequestError(.redirectRefused, "The redirect of \(name(endpoint)) was not followed: \(reason)", endpoint: endpoint, wasSent: true, response: response)
    }

    /// This error for `endpoint`, when it names none yet: a mode that makes an error away from the
    /// request (a refresh shared by several requests) names each request's endpoint this way.
    public func withEndpoint(_ endpoint: Endpoint.ID?) -> RequestError {
        guard self.endpoint == nil, let endpoint else { return self }
        return RequestError(code, detail, endpoint: endpoint, wasSent: wasSent, scheme: scheme, response: response, underlyingError: underlyingError)
    }
}
