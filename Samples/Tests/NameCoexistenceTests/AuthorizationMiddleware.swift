// The OpenAPI client middleware shown in the DocC article "Plugging into your HTTP stack": the
// same code, compiled and tested here. (A packaged middleware is planned for the Integrations package.)
import Foundation
import HTTPTypes
import OpenAPIRuntime
import SDKAuthorization

/// Authorizes every operation of a swift-openapi-generator client through a ``RequestAuthorizer``,
/// and retries once when the authorizer says so.
struct AuthorizationMiddleware: ClientMiddleware {
    let authorizer: RequestAuthorizer
    /// The largest body a provider is shown (a payload-signing provider reads it).
    var maximumBodyBytes = 1 << 20

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var bytes: Data?
        if let body { bytes = try await Data(collecting: body, upTo: maximumBodyBytes) }
        guard let url = URL(string: baseURL.absoluteString + (request.path ?? "")) else { throw URLError(.badURL) }
        var headers: [String: String] = [:]
        for field in request.headerFields { headers[field.name.rawName] = field.value }
        let outgoing = OutgoingRequest(method: request.method.rawValue, url: url, headers: headers, body: bytes)

        var authorized = try await authorizer.authorize(outgoing)
        while true {
            var forwarded = request
            for (name, value) in authorized.request.headers {
                guard let fieldName = HTTPField.Name(name) else { continue }
                forwarded.headerFields[fieldName] = value
            }
            let (response, receivedBody) = try await next(forwarded, bytes.map { HTTPBody($0) }, baseURL)
            var responseBody = receivedBody
            // A rejection's body (an error code) and headers (`WWW-Authenticate`) go to the provider.
            var seen = ServerResponse(statusCode: response.status.code)
            if response.status.code == 401 || response.status.code == 403 {
                for field in response.headerFields { seen.headers[field.name.rawName] = field.value }
                if let received = receivedBody {
                    seen.body = try await Data(collecting: received, upTo: maximumBodyBytes)
                    responseBody = HTTPBody(seen.body)
                }
            }
            switch await authorizer.evaluate(seen, to: authorized) {
            case .accept:
                return (response, responseBody)
            case .retry:
                authorized = try await authorizer.authorize(retrying: authorized)
            case .retryAfter(let seconds):
                try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
                authorized = try await authorizer.authorize(retrying: authorized)
            case .fail(let error):
                throw error
            }
        }
    }
}
