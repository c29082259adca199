import Dispatch
import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationSignature
import SDKAuthorizationModeKit

/// App callbacks never run on a request's path: a subscriber that blocks holds no request.
@Suite("Signature mode: failure subscribers run off the request path", .hangLimit)
struct SignatureFailureDeliveryTests {
    @Test(.timeLimit(.minutes(1))) func aSubscriberThatBlocksDoesNotHoldTheRequestThatReportedTheFailure() async throws {
        let authentication = try SignatureAuthentication()
        try authentication.changeUser("user-1", signature: signature("user-1"))
        let gate = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        let received = Locked<[SignatureErrorCode]>([])
        let subscription = authentication.subscribeToFailures { failure in
            entered.signal()
            // Held until the test has seen the requests return; the timeout only keeps a broken
            // build (a subscriber called on the request's path) from hanging the suite.
            _ = gate.wait(timeout: .now() + 150)
            received.withLock { $0.append(failure.errorCode) }
        }
        defer { subscription.cancel() }
        let codes = [22, 27, 23]
        let answers = Locked(codes)
        let client = try signatureClient(authentication, transport: RecordingTransport { _ in
            authErrorResponse(answers.withLock { $0.removeFirst() }, user: "user-1")
        })
        for (serial, _) in codes.enumerated() {
            try authentication.setSignature(signature("user-1", serial + 1))
            // Each rejected request returns although the subscriber is still blocked on the first failure.
            await #expect(throws: RequestError.self) { _ = try await client.send(OutgoingRequest(method: "POST", url: dataURL)) }
        }
        await Task.detached { entered.wait() }.value
        #expect(received.withLock { $0.isEmpty }, "nothing delivered yet: the subscriber is still blocked")
        for _ in codes { gate.signal() }
        await authentication.failuresDelivered()
        #expect(received.withLock { $0 } == codes.map(SignatureErrorCode.init(rawValue:)), "every failure, in the order reported")
    }

    @Test(.timeLimit(.minutes(1))) func anOptionalReportInAnAcceptedAnswerReturnsWhileItsSubscriberBlocks() async throws {
        let authentication = try SignatureAuthentication()
        try authentication.changeUser("user-1", signature: signature("user-1"))
        let gate = DispatchSemaphore(value: 0)
        let received = Locked(0)
        let subscription = authentication.subscribeToFailures { _ in
            _ = gate.wait(timeout: .now() + 150)
            received.withLock { $0 += 1 }
        }
        defer { subscription.cancel() }
        let client = try signatureClient(authentication, transport: RecordingTransport { _ in authErrorResponse(22, user: "user-1", optional: true, status: 201) })
        let response = try await client.send(OutgoingRequest(method: "POST", url: dataURL))
        #expect(response.statusCode == 201)
        #expect(received.withLock { $0 } == 0)
        gate.signal()
        await authentication.failuresDelivered()
        #expect(received.withLock { $0 } == 1)
    }

    @Test func aSubscriptionCancelledBeforeDeliveryReceivesNothing() async throws {
        let authentication = try SignatureAuthentication()
        let gate = DispatchSemaphore(value: 0)
        let blocker = authentication.subscribeToFailures { _ in _ = gate.wait(timeout: .now() + 150) }
        let received = Locked(0)
        let cancelled = authentication.subscribeToFailures { _ in received.withLock { $0 += 1 } }
        authentication.publish(SignatureFailure(errorCode: .expired, reason: "expired", userId: "user-1", signature: signature("user-1"), optional: false))
        cancelled.cancel()
        gate.signal()
        await authentication.failuresDelivered()
        #expect(received.withLock { $0 } == 0)
        blocker.cancel()
    }
}
