import Foundation
import SDKAuthorization
import SDKAuthorizationEngagement
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A native provider that reads the request it is asked to authorize: it finds the customer in the
/// Engagement body (`customer_ids.registered`) and logs that customer in at the app's server, so the
/// token's subject is always the request's customer.
public struct BodyCustomerTokenProvider: AuthorizationProvider {
    let appServer: URL

    public init(appServer: URL) { self.appServer = appServer }

    public func credential(for context: AuthorizationContext) async throws -> Credential {
        struct Body: Decodable {
            struct IDs: Decodable { let registered: String }
            let customer_ids: IDs
        }
        guard let body = context.request.body, let customer = try? JSONDecoder().decode(Body.self, from: body).customer_ids.registered else {
            return .omitted
        }
        return .bearer(try await AppServer.login(baseURL: appServer, userId: customer))
    }
}

/// The seam from other HTTP stacks: the same configuration authorizes a `URLRequest` that the app
/// sends through its own `URLSession`, and any request sent through the client is matched to the
/// endpoint catalogue by its URL.
public enum HTTPStackSample {
    public static func run(_ environment: SampleEnvironment) async throws -> [ReportRow] {
        let transport = ObservedTransport()
        let client = try AuthorizedHTTPClient(
            configuration: environment.configuration(advancedAuthEnabled: true),
            provider: BodyCustomerTokenProvider(appServer: environment.baseURL),
            transport: transport
        )
        let inboxURL = environment.baseURL.appendingPathComponent("webxp/projects/\(environment.projectToken)/appinbox/fetch")
        var rows: [ReportRow] = []

        // 1. The app's own URLSession: one call authorizes the URLRequest, URLSession sends it.
        var urlRequest = URLRequest(url: inboxURL)
        urlRequest.httpMethod = "POST"
        urlRequest.httpBody = Data(#"{"customer_ids":{"registered":"reader-1"}}"#.utf8)
        urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let authorized = try await client.authorizer.authorize(urlRequest)
        let (data, response) = try await URLSession.shared.data(for: authorized)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        rows.append(ReportRow(mode: "URLSession + authorize(URLRequest)", endpoint: "POST appinbox/fetch",
                              header: redactedHeader(authorized.value(forHTTPHeaderField: "Authorization")),
                              verdict: status == 200 ? "200 accepted" : "\(status) \(serverErrorCode(data))", asExpected: status == 200))

        // 2. Any request through the client: the catalogue finds the endpoint by method and URL.
        let events = OutgoingRequest(
            method: "POST",
            url: environment.baseURL.appendingPathComponent("track/v2/projects/\(environment.projectToken)/customers/events"),
            headers: ["Content-Type": "application/json"],
            body: Data(#"{"customer_ids":{"registered":"reader-1"},"event_type":"open"}"#.utf8)
        )
        let outcome = await Result { () async throws(RequestError) in try await client.send(events) }
        rows.append(ReportRow(mode: "any request, matched by URL", endpoint: "POST customers/events",
                              header: redactedHeader(transport.lastAuthorizationHeader), verdict: verdict(outcome),
                              asExpected: (try? outcome.get()) != nil && transport.lastAuthorizationHeader?.hasPrefix("Token ") == true))

        // 3. The provider reads the body: each customer's request carries that customer's token.
        for customer in ["reader-2", "reader-3"] {
            let body = Data(#"{"customer_ids":{"registered":"\#(customer)"}}"#.utf8)
            let outcome = await Result { () async throws(RequestError) in try await client.send(.appInboxFetch, body: body) }
            rows.append(ReportRow(mode: "provider reads the body (\(customer))", endpoint: "appInboxFetch",
                                  header: redactedHeader(transport.lastAuthorizationHeader), verdict: verdict(outcome),
                                  asExpected: (try? outcome.get()) != nil))
        }
        return rows
    }
}
