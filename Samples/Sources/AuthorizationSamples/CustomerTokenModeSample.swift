import Foundation
import SDKAuthorization
import SDKAuthorizationEngagement
import Synchronization

/// The app's provider, written exactly as the Exponea docs show: a class with a required `init()`
/// whose `getAuthorizationToken()` blocks on a semaphore while it logs in over HTTP.
/// The framework calls it off Swift's cooperative pool, one call at a time, for every request.
public final class SampleAuthProvider: NSObject, AuthorizationProviderType {
    /// Who the app's user is and where the app's server lives (set by the app before use).
    public static let session = SampleSession()

    public required override init() {}

    public func getAuthorizationToken() -> String? {
        guard let (baseURL, userId, variant) = Self.session.current else { return nil }
        return AppServer.loginBlocking(baseURL: baseURL, userId: userId, variant: variant)
    }
}

/// The signed-in user the sample provider fetches tokens for.
public final class SampleSession: Sendable {
    private let value = Mutex<(URL, String, String)?>(nil)

    /// Signs `userId` in; `variant` makes the app server mint a deliberately bad token.
    public func signIn(baseURL: URL, userId: String, variant: String = "valid") {
        value.withLock { $0 = (baseURL, userId, variant) }
    }

    /// Signs out: the provider then returns nil.
    public func signOut() { value.withLock { $0 = nil } }

    var current: (URL, String, String)? { value.withLock { $0 } }
}

/// Customer-token mode: the app-inbox endpoints carry `Bearer <customer JWT>` from the app's provider,
/// found by the name `ExponeaAuthProvider`; the rest keep the API key.
public enum CustomerTokenModeSample {
    public static func run(_ environment: SampleEnvironment) async throws -> [ReportRow] {
        let registry = ProviderRegistry()
        registry.register(SampleAuthProvider.self, as: "ExponeaAuthProvider")   // @objc(ExponeaAuthProvider)
        let transport = ObservedTransport()
        let client = try AuthorizedHTTPClient(
            configuration: AuthorizationConfiguration(
                projectToken: environment.projectToken,
                baseURL: environment.baseURL.absoluteString,
                authorization: "Token \(environment.apiKey)",
                advancedAuthEnabled: true
            ),
            registry: registry,
            transport: transport
        )
        let body = Data(#"{"customer_ids":{"registered":"user-42"}}"#.utf8)
        var rows: [ReportRow] = []
        func record(_ endpoint: Endpoint.ID, _ note: String, expectSuccess: Bool, expectedCode: String? = nil) async {
            let outcome = await Result { () async throws(RequestError) in try await client.send(endpoint, body: body) }
            let text = verdict(outcome)
            let expected = expectSuccess ? (try? outcome.get()) != nil : expectedCode.map { text.hasSuffix($0) } ?? false
            rows.append(ReportRow(mode: "customer token\(note)", endpoint: endpoint.rawValue,
                                  header: redactedHeader(transport.lastAuthorizationHeader), verdict: text, asExpected: expected))
        }

        SampleAuthProvider.session.signIn(baseURL: environment.baseURL, userId: "user-42")
        await record(.appInboxFetch, "", expectSuccess: true)
        await record(.appInboxMarkAsRead, "", expectSuccess: true)
        await record(.trackEvents, "", expectSuccess: true)

        // What the server does with bad customer tokens, each surfaced as a typed rejection.
        for variant in ["expired", "wrongKey", "otherSubject"] {
            SampleAuthProvider.session.signIn(baseURL: environment.baseURL, userId: "user-42", variant: variant)
            let code = ["expired": "token_expired", "wrongKey": "invalid_signature", "otherSubject": "subject_mismatch"][variant]
            await record(.appInboxFetch, " (\(variant))", expectSuccess: false, expectedCode: code)
        }

        // Signed out: the provider returns nil, so the request fails locally and is never sent.
        SampleAuthProvider.session.signOut()
        let outcome = await Result { () async throws(RequestError) in try await client.send(.appInboxFetch, body: body) }
        let notSent: Bool = if case .failure(let error) = outcome { error.code == .missingCustomerToken && !error.wasSent } else { false }
        rows.append(ReportRow(mode: "customer token (signed out)", endpoint: "appInboxFetch", header: "(not sent)",
                              verdict: verdict(outcome), asExpected: notSent))
        return rows
    }
}
