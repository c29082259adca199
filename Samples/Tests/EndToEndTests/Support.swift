import AuthorizationSamples
import Foundation
import ReferenceBackend
import SDKAuthorization
import SDKAuthorizationEngagement
import SDKAuthorizationTesting
import Synchronization
import Testing

/// Starts an embedded reference backend on a free loopback port for one test, and always stops it.
func withEnvironment<T>(
    bearerRequired: Set<EngagementEndpoint> = [],
    _ body: (SampleEnvironment, ReferenceBackend) async throws -> T
) async throws -> T {
    let environment = try await SampleEnvironment.embedded(bearerRequiredEndpoints: bearerRequired)
    let backend = try #require(environment.embedded)
    do {
        let result = try await body(environment, backend)
        await environment.shutdown()
        return result
    } catch {
        await environment.shutdown()
        throw error
    }
}

/// The body of a registered customer, as the Engagement SDK sends it.
func customerBody(_ id: String) -> Data {
    Data(#"{"customer_ids":{"registered":"\#(id)"}}"#.utf8)
}

/// The backend's error code in a rejection, or nil when the error is something else.
func rejection(_ error: RequestError) -> (status: Int, scheme: AuthorizationScheme, code: String)? {
    guard error.code == .authorizationRejected, let status = error.statusCode, let scheme = error.scheme else { return nil }
    let body = error.body
    return (status, scheme, serverErrorCode(body))
}

/// Sends and returns the typed outcome.
func outcome(_ client: AuthorizedHTTPClient, _ endpoint: Endpoint.ID, body: Data? = nil) async -> Result<ServerResponse, RequestError> {
    do { return .success(try await client.send(endpoint, body: body)) } catch { return .failure(error) }
}

/// A provider whose token the test sets; it hands it to the framework synchronously.
final class SettableAuthProvider: NSObject, AuthorizationProviderType {
    static let token = TokenBox()
    required override init() {}
    func getAuthorizationToken() -> String? { Self.token.value }
}

final class TokenBox: Sendable {
    private let stored = Mutex<String?>(nil)
    var value: String? {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }
}
