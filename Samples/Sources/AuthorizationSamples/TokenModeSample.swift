import Foundation
import SDKAuthorization
import SDKAuthorizationEngagement

/// Token mode: the project's API key on every Engagement endpoint.
public enum TokenModeSample {
    public static func run(_ environment: SampleEnvironment) async throws -> [ReportRow] {
        let transport = ObservedTransport()
        let client = try AuthorizedHTTPClient(
            configuration: AuthorizationConfiguration(
                projectToken: environment.projectToken,
                baseURL: environment.baseURL.absoluteString,
                authorization: "Token \(environment.apiKey)"           // advanced auth is off
            ),
            transport: transport
        )
        var rows: [ReportRow] = []
        for endpoint: Endpoint.ID in [.trackCustomers, .trackEvents, .consentCategories, .inAppMessages, .selfCheckNotification] {
            let outcome = await Result { () async throws(RequestError) in
                try await client.send(endpoint, body: Data(#"{"customer_ids":{"registered":"user-42"}}"#.utf8))
            }
            rows.append(ReportRow(mode: "token", endpoint: endpoint.rawValue, header: redactedHeader(transport.lastAuthorizationHeader),
                                  verdict: verdict(outcome), asExpected: (try? outcome.get()) != nil))
        }
        return rows
    }
}

extension Result where Failure == RequestError {
    /// Captures the outcome of a typed-throwing async call.
    init(_ body: () async throws(RequestError) -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
