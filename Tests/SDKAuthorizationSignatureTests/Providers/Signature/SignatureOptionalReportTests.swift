import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationSignature
import SDKAuthorizationModeKit

/// An optional-enforcement answer: the request is accepted (2xx), the failure reported in the body.
func optionalReport(_ code: Int = 22, user: String? = "user-1", status: Int = 201) -> ServerResponse {
    authErrorResponse(code, user: user, optional: true, status: status)
}

@Suite("Signature mode: an optional-enforcement report reaches the subscribers on every path", .hangLimit)
struct SignatureOptionalReportTests {
    let sink = RecordingDiagnosticsSink()

    func subscribed() throws -> (SignatureAuthentication, Locked<[SignatureFailure]>, SignatureFailureSubscription) {
        let authentication = try SignatureAuthentication(diagnostics: sink)
        try authentication.changeUser("user-1", signature: signature("user-1"))
        let events = Locked<[SignatureFailure]>([])
        let subscription = authentication.subscribeToFailures { failure in events.withLock { $0.append(failure) } }
        return (authentication, events, subscription)
    }

    var expected: SignatureFailure {
        SignatureFailure(errorCode: .expired, reason: "code 22", userId: "user-1", signature: signature("user-1"), optional: true)
    }

    @Test func a2xxWithAnOptionalReportSentStraightThroughTheClientReachesTheSubscribersOnceAsOptional() async throws {
        let (authentication, events, subscription) = try subscribed()
        defer { subscription.cancel() }
        let client = try signatureClient(authentication, transport: RecordingTransport { _ in optionalReport() }, diagnostics: sink)
        let response = try await client.send(OutgoingRequest(method: "POST", url: dataURL, body: Data("{}".utf8)))
        #expect(response.statusCode == 201, "accepted: the caller gets the answer")
        await authentication.failuresDelivered()
        #expect(events.withLock { $0 } == [expected])
        #expect(events.withLock { $0.first?.optional } == true)
        // The same signature reported again is not repeated.
        _ = try await client.send(OutgoingRequest(method: "POST", url: dataURL, body: Data("{}".utf8)))
        await authentication.failuresDelivered()
        #expect(events.withLock { $0.count } == 1)
    }

    @Test func a2xxWithAnOptionalReportThroughTheAuthorizersOwnStackOrItsStepsReachesTheSubscribers() async throws {
        let (authentication, events, subscription) = try subscribed()
        defer { subscription.cancel() }
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "sdk.example.com", path: "/**", scheme: .signature))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.signature: authentication], diagnostics: sink)
        #expect(authorizer.inspectsAcceptedResponses, "a streaming stack knows to read small bodies")
        _ = try await authorizer.send(OutgoingRequest(method: "POST", url: dataURL), through: { _ in optionalReport() })
        await authentication.failuresDelivered()
        #expect(events.withLock { $0 } == [expected])

        // A stack that runs the four steps itself: evaluate shows the accepted answer to the provider.
        try authentication.setSignature(signature("user-1", 2), for: "user-1")
        let authorized = try await authorizer.authorize(OutgoingRequest(method: "POST", url: dataURL))
        #expect(await authorizer.evaluate(optionalReport(23, status: 200), to: authorized) == .accept)
        await authentication.failuresDelivered()
        #expect(events.withLock { $0.map(\.errorCode) } == [.expired, .invalidPayload])
        #expect(events.withLock { $0.last?.signature } == signature("user-1", 2))
    }

    @Test func a2xxWithAnOptionalReportThroughTheQueueStillReachesTheSubscribersExactlyOnce() async throws {
        let fixture = try QueueFixture { _ in optionalReport() }
        try fixture.authentication.changeUser("user-1", signature: signature("user-1"))
        let queue = try fixture.queue()
        try await queue.enqueue(fixture.request(1))
        #expect(await queue.flush() == 0, "accepted: the request counts as sent")
        #expect(await fixture.deliveredFailures() == [expected])
        #expect(fixture.sink.messages(at: .info).filter { $0.contains("Signature failure") }.count == 1, "reported once, not by the queue and again by the provider")
        await queue.close()
    }

    @Test func anUnsignedQueuedRequestsOptionalMissingTokenReportNamesTheQueuedUser() async throws {
        let fixture = try QueueFixture { _ in optionalReport(26, user: nil) }
        let queue = try fixture.queue()
        try await queue.enqueue(fixture.request(1), forUser: "user-9")
        #expect(await queue.flush() == 0)
        #expect(await fixture.deliveredFailures() == [SignatureFailure(errorCode: .missingToken, reason: "code 26", userId: "user-9", signature: nil, optional: true)])
        await queue.close()
    }

    @Test func a2xxWithAMalformedOrNoReportReportsNothingAndNeverTraps() async throws {
        let (authentication, events, subscription) = try subscribed()
        defer { subscription.cancel() }
        let bodies: [String] = [
            "", "{}", "not json", "[]", #"{"auth_error":"22"}"#, #"{"auth_error":{"error_code":"22"}}"#,
            #"{"auth_error":{"error_code":22.5,"optional":true}}"#, #"{"auth_error":{"error_code":1e300,"optional":true}}"#,
            #"{"auth_error":{"reason":"no code","optional":true}}"#, #"{"auth_error":{"error_code":22,"reason":""#,
            String(repeating: "[", count: 5_000) + String(repeating: "]", count: 5_000),
            #"{"auth_error":{"error_code":22,"optional":true},"pad":""# + String(repeating: "x", count: 70_000) + #""}"#,
        ]
        for body in bodies {
            let client = try signatureClient(authentication, transport: RecordingTransport(statusCode: 201, body: body), diagnostics: sink)
            let response = try await client.send(OutgoingRequest(method: "POST", url: dataURL, body: Data("{}".utf8)))
            #expect(response.statusCode == 201)
        }
        await authentication.failuresDelivered()
        #expect(events.withLock { $0.isEmpty })
    }

    @Test func anAuthErrorInAnAnswerOtherThan2xxOr401And403IsNotReported() async throws {
        let (authentication, events, subscription) = try subscribed()
        defer { subscription.cancel() }
        let client = try signatureClient(authentication, transport: RecordingTransport { _ in optionalReport(status: 500) }, diagnostics: sink)
        _ = try? await client.send(OutgoingRequest(method: "POST", url: dataURL, body: Data("{}".utf8)))
        await authentication.failuresDelivered()
        #expect(events.withLock { $0.isEmpty })
    }
}
