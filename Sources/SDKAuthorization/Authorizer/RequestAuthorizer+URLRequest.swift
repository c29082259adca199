import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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
    /// credential, send through ``AuthorizedHTTPClient`` (its default transport is
    /// ``URLSessionHTTPTransport``) instead: a plain `URLSession` follows redirects on its own.
    ///
    /// - Throws: ``RequestError`` when the request must not be sent, as ``authorize(_:endpoint:)-(OutgoingRequest,_)``.
    public func authorize(_ request: URLRequest, endpoint: EndpointID? = nil) async throws(RequestError) -> URLRequest {
        guard let url = request.url else { throw .invalidURL(endpoint: endpoint, reason: "the URLRequest has no URL") }
        let outgoing = OutgoingRequest(
            method: request.httpMethod ?? "GET",
            url: url,
            headers: request.allHTTPHeaderFields ?? [:],
            body: request.httpBody
        )
        let authorized = try await authorize(outgoing, endpoint: endpoint)
        var result = request
        if let name = authorized.issued?.credential.headerName, let value = authorized.request.value(forHeader: name) {
            result.setValue(value, forHTTPHeaderField: name)
        }
        return result
    }
}
