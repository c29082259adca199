import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit
import SDKAuthorizationSignature
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The app's own server in the signature mode: it signs an RS256 JWT for a user with its private
/// key, whose public half the vendor holds. (The reference backend plays that role at
/// `POST /app/braze-signature`; `variant` asks for a deliberately bad one: `expired`, `missingExp`,
/// `wrongAlgorithm`, `wrongKey`, `otherSubject`.)
public enum SignatureServer {
    struct Answer: Decodable { let signature: String }

    public static func signature(baseURL: URL, userId: String, variant: String = "valid") async throws -> String {
        var request = URLRequest(url: baseURL.appendingPathComponent("app/braze-signature"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: ["userId": userId, "variant": variant])
        let (data, response) = try await URLSession.shared.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw SampleError("signature failed: \(String(decoding: data.prefix(200), as: UTF8.self))")
        }
        return try JSONDecoder().decode(Answer.self, from: data).signature
    }

    /// Switches the vendor's enforcement for `appId` (`disabled`, `optional`, `required`) through
    /// the reference backend's loopback-only test route.
    public static func setEnforcement(_ enforcement: String, appId: String, baseURL: URL) async throws {
        var request = URLRequest(url: baseURL.appendingPathComponent("__braze/apps/\(appId)/enforcement"))
        request.httpMethod = "PUT"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: ["enforcement": enforcement])
        let (data, response) = try await URLSession.shared.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw SampleError("enforcement change failed: \(String(decoding: data.prefix(200), as: UTF8.self))")
        }
    }
}

/// Signature mode (Braze style): each user's requests carry `X-Braze-Auth-Signature: <jwt>` from the
/// app's server; a rejected signature reaches the app's failure subscriber with its code, the app
/// supplies a new one, and the durable queue sends the request again with it.
public enum SignatureModeSample {
    /// The app the reference backend knows by default.
    public static let appId = "reference-app"
    static let header = SignatureAuthentication.defaultHeaderName

    /// A Braze-style data request: the user, a request ID the backend counts deliveries by, one event.
    public static func dataRequest(baseURL: URL, userId: String?, requestId: String) -> OutgoingRequest {
        var body: [String: Any] = ["request_id": requestId, "events": [["name": "sample_event"]]]
        if let userId { body["user_id"] = userId }
        return OutgoingRequest(
            method: "POST",
            url: baseURL.appendingPathComponent("braze/apps/\(appId)/data"),
            headers: ["Content-Type": "application/json"],
            body: (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data()
        )
    }

    /// A client that gives the backend's `/braze/**` requests the signature scheme.
    public static func makeClient(baseURL: URL, authentication: SignatureAuthentication, transport: any HTTPTransport) throws -> AuthorizedHTTPClient {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(origin: baseURL, path: "/braze/**", scheme: .signature))
        return AuthorizedHTTPClient(authorizer: try RequestAuthorizer(policy: policy, providers: [.signature: authentication]), transport: transport)
    }

    public static func run(_ environment: SampleEnvironment) async throws -> [ReportRow] {
        let baseURL = environment.baseURL
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sdkauth-signature-sample-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let endpoint = "POST /braze/apps/\(appId)/data"
        var rows: [ReportRow] = []

        let authentication = try SignatureAuthentication()
        let transport = ObservedTransport()
        let client = try makeClient(baseURL: baseURL, authentication: authentication, transport: transport)
        // The app's failure subscriber: log it, fetch a new signature for that user, hand it over.
        let events = Mutex<[SignatureFailure]>([])
        let subscription = authentication.subscribeToFailures { failure in
            events.withLock { $0.append(failure) }
            guard !failure.optional, let user = failure.userId else { return }
            Task {
                if let fresh = try? await SignatureServer.signature(baseURL: baseURL, userId: user) {
                    try? authentication.setSignature(fresh, for: user)
                }
            }
        }
        defer { subscription.cancel() }
        // Subscribers are called off the request path: wait for what was reported so far to arrive.
        func eventsFor(_ user: String) async -> [SignatureFailure] {
            await authentication.failuresDelivered()
            return events.withLock { $0.filter { $0.userId == user } }
        }
        func row(_ note: String, verdict: String, expected: Bool) {
            rows.append(ReportRow(mode: "signature (\(note))", endpoint: endpoint, header: "\(header): \(transport.lastHeader(header).map { Redaction.redact($0) } ?? "(none)")",
                                  verdict: verdict, asExpected: expected))
        }
        func delivered(_ ids: [String]) -> Bool {
            guard let backend = environment.embedded else { return true }
            let deliveries = backend.signatureDeliveries()
            return ids.allSatisfy { deliveries[$0] == 1 }
        }

        let queue = try SignatureRequestQueue(name: "sample", directory: directory, authentication: authentication, client: client)

        // The backend starts with enforcement Disabled, Braze's default; the rows below show Required
        // first, so the sample says so rather than relying on how the backend was started.
        try await SignatureServer.setEnforcement("required", appId: appId, baseURL: baseURL)

        // 1. A valid signature: three queued requests, each sent once and accepted.
        try authentication.changeUser("user-1", signature: try await SignatureServer.signature(baseURL: baseURL, userId: "user-1"))
        let ids = (1...3).map { "user-1-request-\($0)" }
        for id in ids { try await queue.enqueue(dataRequest(baseURL: baseURL, userId: "user-1", requestId: id)) }
        let left = await queue.flush()
        let validEvents = await eventsFor("user-1")
        row("valid, 3 queued", verdict: left == 0 ? "201 accepted x3" : "\(left) still queued", expected: left == 0 && validEvents.isEmpty && delivered(ids))

        // 2. Rejections: each reaches the subscriber with its code and the failed JWT; the subscriber
        //    fetches a new signature, and the queued request is sent again with it and accepted.
        for (user, variant, code) in [
            ("user-2", "expired", SignatureErrorCode.expired), ("user-3", "wrongKey", .noMatchingPublicKeys),
            ("user-4", "wrongAlgorithm", .incorrectAlgorithm), ("user-5", "otherSubject", .subjectMismatch),
            ("user-6", "missingExp", .expirationRequired), ("user-7", "none", .missingToken),
        ] {
            let bad = variant == "none" ? nil : try await SignatureServer.signature(baseURL: baseURL, userId: user, variant: variant)
            try authentication.changeUser(user, signature: bad)
            let requestId = "\(user)-request"
            try await queue.enqueue(dataRequest(baseURL: baseURL, userId: user, requestId: requestId))
            await queue.flush()
            let sentAgain = await waitUntil { queue.count == 0 }
            let failures = await eventsFor(user)
            let first = failures.first
            row("\(variant == "none" ? "no signature" : variant) -> \(code.rawValue), new signature",
                verdict: "401 \(first.map { "\($0.errorCode)" } ?? "no event"), then \(sentAgain ? "201 accepted" : "still queued")",
                expected: sentAgain && failures.count == 1 && first?.errorCode == code && first?.signature == bad && delivered([requestId]))
        }

        // 3. Queued requests belong to their user: queued for user-8 while offline, the app changes to
        //    user-9, the process restarts; the recovered request goes with user-8's signature.
        try authentication.changeUser("user-8", signature: try await SignatureServer.signature(baseURL: baseURL, userId: "user-8"))
        let offlineClient = try makeClient(baseURL: baseURL, authentication: authentication, transport: OfflineTransport())
        let offline = try SignatureRequestQueue(name: "restart", directory: directory, authentication: authentication, client: offlineClient)
        try await offline.enqueue(dataRequest(baseURL: baseURL, userId: "user-8", requestId: "user-8-request"))
        await offline.close()
        try authentication.changeUser("user-9", signature: try await SignatureServer.signature(baseURL: baseURL, userId: "user-9"))
        let restarted = try SignatureRequestQueue(name: "restart", directory: directory, authentication: authentication, client: client)
        let restartLeft = await restarted.flush()
        let sentAs = transport.lastHeader(header).flatMap { try? JWTClaims(decoding: $0).subject }
        row("restart, 1 recovered for user-8 after changeUser(user-9)", verdict: restartLeft == 0 ? "201 accepted as \(sentAs ?? "?")" : "still queued",
            expected: restarted.recovery.recoveredCount == 1 && restartLeft == 0 && sentAs == "user-8" && delivered(["user-8-request"]))
        await restarted.close()

        // 4. Optional enforcement: the server verifies and reports, but accepts.
        try await SignatureServer.setEnforcement("optional", appId: appId, baseURL: baseURL)
        try authentication.changeUser("user-10", signature: try await SignatureServer.signature(baseURL: baseURL, userId: "user-10", variant: "expired"))
        try await queue.enqueue(dataRequest(baseURL: baseURL, userId: "user-10", requestId: "user-10-request"))
        let optionalLeft = await queue.flush()
        let optionalEvent = await eventsFor("user-10").first
        row("optional enforcement, expired", verdict: "201 accepted, reported \(optionalEvent.map { "\($0.errorCode) optional" } ?? "nothing")",
            expected: optionalLeft == 0 && optionalEvent?.optional == true && optionalEvent?.errorCode == .expired && delivered(["user-10-request"]))

        // 4b. The same report on a request sent straight through the client, not queued: the
        //     provider reads it from the accepted answer, so the subscriber hears of it once.
        try authentication.changeUser("user-12", signature: try await SignatureServer.signature(baseURL: baseURL, userId: "user-12", variant: "expired"))
        let direct = try await client.send(dataRequest(baseURL: baseURL, userId: "user-12", requestId: "user-12-request"))
        let directEvents = await eventsFor("user-12")
        row("optional enforcement, expired, sent directly", verdict: "\(direct.statusCode) accepted, reported \(directEvents.first.map { "\($0.errorCode) optional" } ?? "nothing")",
            expected: direct.statusCode == 201 && directEvents.count == 1 && directEvents.first?.optional == true
                && directEvents.first?.errorCode == .expired && delivered(["user-12-request"]))

        // 5. Disabled: nothing is checked or reported.
        try await SignatureServer.setEnforcement("disabled", appId: appId, baseURL: baseURL)
        try authentication.changeUser("user-11", signature: try await SignatureServer.signature(baseURL: baseURL, userId: "user-11", variant: "expired"))
        try await queue.enqueue(dataRequest(baseURL: baseURL, userId: "user-11", requestId: "user-11-request"))
        let disabledLeft = await queue.flush()
        let disabledEvents = await eventsFor("user-11")
        row("disabled enforcement, expired", verdict: disabledLeft == 0 ? "201 accepted, nothing reported" : "still queued",
            expected: disabledLeft == 0 && disabledEvents.isEmpty && delivered(["user-11-request"]))
        // Back to the backend's default.
        try await SignatureServer.setEnforcement("disabled", appId: appId, baseURL: baseURL)
        await queue.close()
        return rows
    }

    /// Polls `condition` until it holds or `seconds` pass (a sample waiting for the app's subscriber).
    static func waitUntil(seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return condition()
    }
}

/// A transport for a device without network: every send fails.
public struct OfflineTransport: HTTPTransport {
    struct Offline: Error {}
    public init() {}
    public func send(_ request: OutgoingRequest) async throws -> ServerResponse { throw Offline() }
}
