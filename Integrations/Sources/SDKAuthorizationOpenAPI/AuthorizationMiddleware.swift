import Foundation
import HTTPTypes
import OpenAPIRuntime
import SDKAuthorization

/// A swift-openapi-runtime `ClientMiddleware` that authorizes every operation of a generated
/// client through a `RequestAuthorizer`, and sends it once more through `next`
/// when the authorizer answers a rejection with a retry.
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
///    collected up to ``maximumBodyBytes``) and sets the credential header field it answers.
/// 3. Hands a 401 or 403 (status, header fields, body) to
///    `RequestAuthorizer.evaluate(_:to:)`: on a retry (after the delay the
///    provider asks for, on the injected clock) it authorizes the request again and sends it once
///    more through `next`; on a failure it throws the `RequestError`.
///
/// Errors reach the caller of the generated client as its `ClientError`, whose
/// `underlyingError` is the `RequestError` (an `authorizationRejected` code for a
/// final 401 or 403, `missingCustomerToken` for a provider that gave no token, ...).
///
/// The transport below follows redirects on its own terms: `URLSessionTransport` follows them,
/// and AsyncHTTPClient's transport follows them unless its client is configured not to. Only
/// `AuthorizedHTTPClient` (for example over `AsyncHTTPClientHTTPTransport`)
/// drops the credential on a hop to another origin itself.
public struct AuthorizationMiddleware: ClientMiddleware {
    /// The seam that authorizes each operation.
    public let authorizer: RequestAuthorizer
    /// Operation IDs mapped to the catalogue endpoints they call, for operations whose ID is not
    /// already an endpoint's name.
    public var operations: [String: EndpointID]
    /// The largest request or rejection body collected, in bytes (default 1 MiB). A longer request
    /// body fails the operation before it is sent.
    public var maximumBodyBytes: Int
    /// The clock a retry's delay runs on.
    let clock: any AuthorizationClock

    /// Creates a middleware.
    ///
    /// - Parameters:
    ///   - authorizer: The seam, e.g. `AuthorizedHTTPClient.authorizer`.
    ///   - operations: Operation IDs mapped to catalogue endpoints.
    ///   - maximumBodyBytes: The largest request or rejection body collected, in bytes.
    ///   - clock: The clock a retry's delay runs on.
    public init(
        authorizer: RequestAuthorizer,
        operations: [String: EndpointID] = [:],
        maximumBodyBytes: Int = 1 << 20,
        clock: any AuthorizationClock = SystemClock()
    ) {
        self.authorizer = authorizer
        self.operations = operations
        self.maximumBodyBytes = maximumBodyBytes
        self.clock = clock
    }

    /// The catalogue endpoint an operation calls, or `nil` to match the request by method and URL.
    public func endpoint(forOperation operationID: String) -> EndpointID? {
        if let mapped = operations[operationID] { return mapped }
        let named = EndpointID(rawValue: operationID)
        return authorizer.policy.scheme(for: named) == nil ? nil : named
    }

    /// Authorizes the operation, sends it through `next`, and sends it once more after a rejection
    /// the authorizer answers with a retry.
    public func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var bytes: Data?
        if let body { bytes = try await Data(collecting: body, upTo: maximumBodyBytes) }
        let outgoing = OutgoingRequest(
            method: request.method.rawValue,
            url: try Self.url(of: request, baseURL: baseURL),
            headers: Self.headers(request.headerFields),
            body: bytes
        )
        var authorized = try await authorizer.authorize(outgoing, endpoint: endpoint(forOperation: operationID))
        while true {
            var forwarded = request
            // Only the fields the authorizer set: the credential of this attempt, never a stale one.
            for (name, value) in authorized.request.headers where authorized.original.value(forHeader: name) != value {
                guard let fieldName = HTTPField.Name(name) else { continue }
                forwarded.headerFields[fieldName] = value
            }
            let (response, receivedBody) = try await next(forwarded, bytes.map { HTTPBody($0) }, baseURL)
            let code = response.status.code
            guard code == 401 || code == 403 else { return (response, receivedBody) }

            // A rejection's header fields (`WWW-Authenticate`) and body (an error code) go to the provider.
            var seen = ServerResponse(statusCode: code, headers: Self.headers(response.headerFields))
            if let receivedBody { seen.body = try await Data(collecting: receivedBody, upTo: maximumBodyBytes) }
            switch await authorizer.evaluate(seen, to: authorized) {
            case .accept:
                return (response, HTTPBody(seen.body))
            case .retry:
                authorized = try await authorizer.authorize(retrying: authorized)
            case .retryAfter(let seconds):
                try await clock.sleep(untilMonotonic: clock.monotonicNow() + seconds)
                authorized = try await authorizer.authorize(retrying: authorized)
            case .fail(let error):
                throw error
            }
        }
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
