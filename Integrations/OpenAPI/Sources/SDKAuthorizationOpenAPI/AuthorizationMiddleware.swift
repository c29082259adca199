import Foundation
import HTTPTypes
import OpenAPIRuntime
import SDKAuthorization

/// A swift-openapi-runtime `ClientMiddleware` that runs every operation of a generated client
/// through the framework's one request loop, `RequestAuthorizer.send(_:endpoint:through:reading:)`,
/// with `next` as the stack: authorized, redirects followed safely, a rejection handed to the
/// provider, and sent once more through `next` when the provider asks for a retry.
///
/// ```swift
/// let client = Client(
///     serverURL: try Servers.Server1.url(),
///     transport: URLSessionTransport(),
///     middlewares: [AuthorizationMiddleware(authorizer: authorizedClient.authorizer)]
/// )
/// ```
///
/// For each operation it:
/// 1. Finds the endpoint: ``operations`` maps an `operationID` to a catalogue endpoint; an
///    `operationID` that is itself the name of an endpoint in the policy maps to it; any other
///    operation is matched by method and URL (the catalogue, then the rules), as
///    `RequestAuthorizer.authorize(_:endpoint:)` does. A request mapped to an
///    endpoint must go to that endpoint's origin, or it fails before it is sent.
/// 2. Shows the provider the whole request (method, URL with query, header fields and the body,
///    collected up to ``maximumBodyBytes``) and sets the credential header field it answers. A
///    request that gets no scheme (no rule or endpoint names it) is shown to no provider: its body
///    is not collected but handed to `next` as it came, streamed, whatever its length.
/// 3. Hands a 401 or 403 (status, header fields, body) to the provider that issued the credential:
///    on a retry (after the delay the provider asks for, on the authorizer's clock, within the
///    request's deadline) it authorizes the request again and sends it once more through `next`;
///    on a failure it throws the `RequestError`.
/// 4. Shows any other final answer to the provider when it reads accepted answers
///    (`AuthorizationProvider.inspectsAcceptedResponses`, e.g. the signature mode's
///    optional-enforcement report in a 2xx): a body of known length up to ``maximumBodyBytes`` is
///    read once and handed on to the caller as a body it can still read; a streamed body is not read.
///
/// Errors reach the caller of the generated client as its `ClientError`, whose
/// `underlyingError` is the `RequestError` (an `authorizationRejected` code for a
/// final 401 or 403, `emptyCredential` for a provider that gave an empty credential, ...).
///
/// The transport below follows redirects on its own terms: `URLSessionTransport` follows them,
/// and AsyncHTTPClient's transport follows them unless its client is configured not to. A redirect
/// that reaches the middleware is followed by the loop, which drops the credential and caller
/// headers on a hop to another origin, as `AuthorizedHTTPClient` does.
///
/// The loop runs in the caller's task: the request's deadline ends every wait for a credential
/// and every retry delay, and the transport below keeps its own timeout.
public struct AuthorizationMiddleware: ClientMiddleware {
    /// The seam that authorizes each operation.
    public let authorizer: RequestAuthorizer
    /// Operation IDs mapped to the catalogue endpoints they call, for operations whose ID is not
    /// already an endpoint's name.
    public var operations: [String: Endpoint.ID]
    /// The largest request or rejection body collected, in bytes (default 1 MiB). A request body is
    /// collected only when a provider is asked for the request's credential (the provider sees
    /// it, and a retry sends it again); a longer one then fails the operation before it is sent. The
    /// body of a request that gets no scheme is streamed to `next` and has no limit here (a
    /// same-origin 307 or 308 redirect sends it once more, which needs a body that can be iterated
    /// more than once, as `HTTPBody`'s of bytes can).
    public var maximumBodyBytes: Int

    /// Creates a middleware.
    ///
    /// - Parameters:
    ///   - authorizer: The seam, e.g. `AuthorizedHTTPClient.authorizer`.
    ///   - operations: Operation IDs mapped to catalogue endpoints.
    ///   - maximumBodyBytes: The largest request or rejection body collected, in bytes.
    public init(
        authorizer: RequestAuthorizer,
        operations: [String: Endpoint.ID] = [:],
        maximumBodyBytes: Int = 1 << 20
    ) {
        self.authorizer = authorizer
        self.operations = operations
        self.maximumBodyBytes = maximumBodyBytes
    }

    /// The catalogue endpoint an operation calls, or `nil` to match the request by method and URL.
    public func endpoint(forOperation operationID: String) -> Endpoint.ID? {
        if let mapped = operations[operationID] { return mapped }
        let named = Endpoint.ID(rawValue: operationID)
        return authorizer.policy.scheme(for: named) == nil ? nil : named
    }

    /// Runs the operation through the request loop with `next` as the stack.
    public func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let url = try Self.url(of: request, baseURL: baseURL)
        let endpointID = endpoint(forOperation: operationID)
        var outgoing = OutgoingRequest(method: request.method.rawValue, url: url, headers: Self.headers(request.headerFields))
        // A provider sees the whole request, body included (one that signs payloads signs it), and
        // a retry sends it again: the body is collected when a credential is involved. A request
        // no rule or endpoint gives a scheme is shown to no provider and never retried, so its body
        // goes to `next` as it came, streamed, whatever its length. The loop is then given an empty
        // body in its place, so that it still refuses a redirect that would forward the body to
        // another origin, and drops it when a 303 turns the request into a GET.
        let scheme = scheme(of: outgoing, endpoint: endpointID)
        let streamed = body != nil && scheme == AuthorizationScheme.none
        if let body, !streamed { outgoing.body = try await Self.collect(body, upTo: maximumBodyBytes, scheme: scheme) }
        if streamed { outgoing.body = Data() }
        let original = outgoing
        let limit = maximumBodyBytes
        // A provider that reads accepted answers (an optional-enforcement report in a 2xx) gets the
        // body of one whose length is known and within the limit; otherwise no body is buffered.
        let inspects = authorizer.inspectsAcceptedResponses
        return try await authorizer.send(outgoing, endpoint: endpointID, through: { sent in
            let (forwarded, forwardedBaseURL) = try Self.forward(sent, as: request, original: original, baseURL: baseURL)
            let forwardedBody = streamed ? (sent.body == nil ? nil : body) : sent.body.map { HTTPBody($0) }
            let (response, responseBody) = try await next(forwarded, forwardedBody, forwardedBaseURL)
            guard inspects, let responseBody, Self.isSmall(responseBody, limit: limit),
                  response.status.code != 401, response.status.code != 403 else {
                return (response, responseBody)
            }
            // Read once here, handed on as a body the caller can still read.
            return (response, HTTPBody(try await Data(collecting: responseBody, upTo: limit)))
        }, reading: { response, body in
            // A rejection's header fields (`WWW-Authenticate`) and body (an error code) go to the
            // provider; the loop never returns a 401 or 403, so its body may be read here.
            var seen = ServerResponse(statusCode: response.status.code, headers: Self.headers(response.headerFields))
            if seen.statusCode == 401 || seen.statusCode == 403, let body {
                seen.body = try await Data(collecting: body, upTo: limit)
            } else if inspects, let body, body.iterationBehavior == .multiple, Self.isSmall(body, limit: limit) {
                seen.body = try await Data(collecting: body, upTo: limit)
            }
            return seen
        })
    }

    /// The whole request body, or ``RequestBodyTooLong`` once it is longer than `limit`.
    static func collect(_ body: HTTPBody, upTo limit: Int, scheme: AuthorizationScheme?) async throws -> Data {
        if case .known(let length) = body.length, length > limit { throw RequestBodyTooLong(limit: limit, scheme: scheme) }
        var data = Data()
        for try await chunk in body {
            guard chunk.count <= limit - data.count else { throw RequestBodyTooLong(limit: limit, scheme: scheme) }
            data.append(contentsOf: chunk)
        }
        return data
    }

    /// The scheme the loop will give `request`: its endpoint's, or the one its method and URL match;
    /// `nil` for an endpoint the policy does not name (the loop then fails it).
    func scheme(of request: OutgoingRequest, endpoint: Endpoint.ID?) -> AuthorizationScheme? {
        guard let endpoint else { return authorizer.scheme(for: request).scheme }
        return authorizer.policy.scheme(for: endpoint)
    }

    /// Whether `body` has a known length within `limit` bytes.
    static func isSmall(_ body: HTTPBody, limit: Int) -> Bool {
        if case .known(let length) = body.length { return length <= Int64(limit) }
        return false
    }

    /// The operation's request as the loop sends it now: its credential, any header a redirect to
    /// another origin dropped removed, and a redirect's method and URL (as a base URL and a path).
    static func forward(_ sent: OutgoingRequest, as request: HTTPRequest, original: OutgoingRequest, baseURL: URL) throws -> (HTTPRequest, URL) {
        var forwarded = request
        // Fields the loop removed (a redirect to another origin) go; fields it set or changed (the
        // credential of this attempt) are set; the others stay as the generated client made them.
        for field in request.headerFields where sent.value(forHeader: field.name.canonicalName) == nil {
            forwarded.headerFields[field.name] = nil
        }
        for (name, value) in sent.headers where original.value(forHeader: name) != value {
            guard let fieldName = HTTPField.Name(name) else { continue }
            forwarded.headerFields[fieldName] = value
        }
        guard sent.url != original.url || sent.method != original.method else { return (forwarded, baseURL) }
        forwarded.method = HTTPRequest.Method(sent.method) ?? forwarded.method
        guard var origin = URLComponents(url: sent.url, resolvingAgainstBaseURL: true) else {
            throw RequestError.invalidURL(endpoint: nil, reason: "the redirect's URL cannot be split into a base URL and a path")
        }
        let path = origin.percentEncodedPath.isEmpty ? "/" : origin.percentEncodedPath
        forwarded.path = origin.percentEncodedQuery.map { "\(path)?\($0)" } ?? path
        origin.percentEncodedPath = ""
        origin.percentEncodedQuery = nil
        origin.fragment = nil
        guard let redirectedBase = origin.url else {
            throw RequestError.invalidURL(endpoint: nil, reason: "the redirect's URL cannot be split into a base URL and a path")
        }
        return (forwarded, redirectedBase)
    }

    /// The base URL with the request's path and query appended, as OpenAPI transports build it.
    static func url(of request: HTTPRequest, baseURL: URL) throws -> URL {
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: true),
              let target = URLComponents(string: request.path ?? "")
        else { throw RequestError.invalidURL(endpoint: nil, reason: "the operation's path is not a URL path") }
        var basePath = components.percentEncodedPath
        if basePath.hasSuffix("/"), target.percentEncodedPath.hasPrefix("/") { basePath.removeLast() }
        components.percentEncodedPath = basePath + target.percentEncodedPath
        components.percentEncodedQuery = target.percentEncodedQuery
        guard let url = components.url else {
            throw RequestError.invalidURL(endpoint: nil, reason: "the base URL and the operation's path do not form a URL")
        }
        return url
    }

    /// Header fields by name; repeated fields joined with `, ` as RFC 9110 allows.
    static func headers(_ fields: HTTPFields) -> [String: String] {
        var headers: [String: String] = [:]
        for field in fields {
            let name = field.name.canonicalName
            headers[name] = headers[name].map { "\($0), \(field.value)" } ?? field.value
        }
        return headers
    }
}

/// A request body a provider would be shown is longer than ``AuthorizationMiddleware/maximumBodyBytes``;
/// the operation fails before it is sent.
struct RequestBodyTooLong: Error, CustomStringConvertible, LocalizedError {
    let limit: Int
    let scheme: AuthorizationScheme?

    var description: String {
        "The request body is longer than AuthorizationMiddleware.maximumBodyBytes (\(limit) bytes), so it was not sent. "
            + "It is collected because the provider of its scheme (\(scheme.map(String.init(describing:)) ?? "unknown")) is shown the whole request "
            + "and a retry sends it again; raise maximumBodyBytes to send it."
    }

    var errorDescription: String? { description }
}
