import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
internal import SDKAuthorizationPrimitives

extension RequestAuthorizer {
    /// Authorizes a Foundation `URLRequest` in one call, for an SDK that sends through its own
    /// `URLSession`: the request comes back with the credential header field the policy names for
    /// it, or unchanged when no rule matches.
    ///
    /// ```swift
    /// let request = try await authorizer.authorize(URLRequest(url: inboxURL))
    /// let (data, response) = try await session.data(for: request)
    /// ```
    ///
    /// The provider sees the method, URL, header fields and `httpBody` (a body stream is not read).
    /// To have rejections evaluated and retried, and redirects to another origin stripped of the
    /// credential, send with ``data(for:using:endpoint:)`` instead: a plain `URLSession` follows
    /// redirects on its own.
    ///
    /// - Throws: ``RequestError`` when the request must not be sent, as ``authorize(_:endpoint:)-(OutgoingRequest,_)``.
    public func authorize(_ request: URLRequest, endpoint: Endpoint.ID? = nil) async throws(RequestError) -> URLRequest {
        guard let url = request.url else { throw .invalidURL(endpoint: endpoint, reason: "the URLRequest has no URL") }
        let fields = request.allHTTPHeaderFields ?? [:]
        let outgoing = OutgoingRequest(method: request.httpMethod ?? "GET", url: url, headers: fields, body: request.httpBody)
        let authorized = try await authorize(outgoing, endpoint: endpoint)
        guard let credential = authorized.issued?.credential, credential.headerName != nil else { return request }
        var result = request
        result.allHTTPHeaderFields = Self.fields(fields, with: [credential.headerName].compactMap { $0 } + credential.addedFieldNames, from: authorized.request)
        return result
    }

    /// `fields` with each of `names` set to its value in `authorized`, replacing a field of the
    /// same name in another case, as `setValue(_:forHTTPHeaderField:)` does. Set as a whole, once:
    /// on swift-corelibs-foundation each `setValue(_:forHTTPHeaderField:)` costs about 3 µs, four
    /// times a whole table ("Seam against Alamofire" in BENCHMARKS.md).
    private static func fields(_ fields: [String: String], with names: [String], from authorized: OutgoingRequest) -> [String: String] {
        var result = fields
        for name in names {
            guard let value = authorized.value(forHeader: name) else { continue }
            for key in result.keys where key != name && HeaderFieldRules.sameName(key, name) { result[key] = nil }
            result[name] = value
        }
        return result
    }

    /// Sends a Foundation `URLRequest` through `session` with the whole request loop
    /// (``send(_:endpoint:through:reading:)``), ended by the request's deadline, which cancels it.
    ///
    /// ```swift
    /// let (data, response) = try await authorizer.data(for: URLRequest(url: inboxURL), using: session)
    /// ```
    ///
    /// The request's `httpBody` is sent (a body stream is not read); `session` stays yours, as with
    /// ``URLSessionHTTPTransport/init(session:)``; `endpoint` is as in ``send(_:endpoint:through:reading:)``.
    ///
    /// - Returns: The body and the response, whatever the status, except 401 and 403. The response's
    ///   URL is the request's, even after redirects.
    /// - Throws: ``RequestError``, as ``send(_:endpoint:through:reading:)``.
    public func data(for request: URLRequest, using session: URLSession = .shared, endpoint: Endpoint.ID? = nil) async throws(RequestError) -> (Data, HTTPURLResponse) {
        guard let url = request.url else { throw .invalidURL(endpoint: endpoint, reason: "the URLRequest has no URL") }
        let outgoing = OutgoingRequest(method: request.httpMethod ?? "GET", url: url, headers: request.allHTTPHeaderFields ?? [:], body: request.httpBody)
        let transport = URLSessionHTTPTransport(session: session)
        let response = try await send(outgoing, endpoint: endpoint, within: transport, endsByDeadline: transport.endsByDeadline)
        guard let http = HTTPURLResponse(url: url, statusCode: response.statusCode, httpVersion: "HTTP/1.1", headerFields: response.headers) else {
            throw RequestError.transportFailed(URLError(.badServerResponse), endpoint: endpoint).naming(outgoing)
        }
        return (response.body, http)
    }
}
