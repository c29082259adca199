import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationSignature
import SDKAuthorizationModeKit

/// `"jos\u{E9}"` (NFC) and `"jose\u{301}"` (NFD): equal for Swift's `==`, two users for a server.
let composedUser = "jos\u{E9}"
let decomposedUser = "jose\u{301}"

@Suite("Signature mode: user IDs compare as exact bytes", .hangLimit)
struct SignatureUserIDBytesTests {
    @Test func theTwoSpellingsAreEqualStringsButDifferentBytes() {
        #expect(composedUser == decomposedUser)
        #expect(!composedUser.utf8.elementsEqual(decomposedUser.utf8))
        #expect(UserKey(composedUser) != UserKey(decomposedUser))
        #expect(UserKey(composedUser) == UserKey("jos\u{E9}"))
    }

    @Test func canonicallyEquivalentUserIDsHaveSignatureSlotsOfTheirOwn() async throws {
        let authentication = try SignatureAuthentication()
        try authentication.changeUser(composedUser, signature: signature("jose", 1))
        try authentication.changeUser(decomposedUser)
        #expect(authentication.signature(for: decomposedUser) == nil, "the second user, who has none, is not given the first's")
        let transport = RecordingTransport(statusCode: 201)
        let client = try signatureClient(authentication, transport: transport)
        _ = try await client.send(OutgoingRequest(method: "POST", url: dataURL, body: Data("{}".utf8)))
        #expect(transport.requests.first?.value(forHeader: "X-Braze-Auth-Signature") == nil, "sent without the other user's signature")
        try authentication.setSignature(signature("jose", 2), for: decomposedUser)
        #expect(authentication.signature(for: composedUser) == signature("jose", 1), "setting one's signature leaves the other's")
        #expect(authentication.signature(for: decomposedUser) == signature("jose", 2))
    }

    @Test func aFailureOfOneSpellingDoesNotHideTheOthersFailure() async throws {
        let authentication = try SignatureAuthentication()
        let received = Locked<[String?]>([])
        let subscription = authentication.subscribeToFailures { failure in received.withLock { $0.append(failure.userId) } }
        defer { subscription.cancel() }
        for user in [composedUser, decomposedUser] {
            authentication.publish(SignatureFailure(errorCode: .expired, reason: "expired", userId: user, signature: signature("jose"), optional: false))
        }
        await authentication.failuresDelivered()
        let users = received.withLock { $0 }
        #expect(users.count == 2 && users.first??.utf8.elementsEqual(composedUser.utf8) == true && users.last??.utf8.elementsEqual(decomposedUser.utf8) == true)
    }

    @Test func canonicallyEquivalentUserIDsHaveQueueLanesOfTheirOwn() async throws {
        let fixture = try QueueFixture { request in
            request.value(forHeader: "X-Braze-Auth-Signature") == signature("jose", 1) ? authErrorResponse(22) : ServerResponse(statusCode: 201)
        }
        try fixture.authentication.changeUser(composedUser, signature: signature("jose", 1))
        try fixture.authentication.changeUser(decomposedUser, signature: signature("jose", 2))
        let queue = try fixture.queue()
        try await queue.enqueue(fixture.request(0), forUser: composedUser)
        try await queue.enqueue(fixture.request(1), forUser: decomposedUser)
        #expect(await queue.waitUntilIdle() == 1, "the second user's request is not held behind the first's rejected one")
        #expect(sentNumbers(fixture.transport, signedWith: signature("jose", 2)) == [1])
        #expect(sentNumbers(fixture.transport, signedWith: signature("jose", 1)) == [0])
        await queue.close()
    }

    @Test func canonicallyEquivalentUserIDsHaveJournalLanesOfTheirOwn() async throws {
        let directory = try ownerOnlyQueueDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let journal = try RequestJournalFile(directory: directory, name: "lanes", limits: .init(maximumEntries: 10, maximumBytes: 1 << 20), diagnostics: RecordingDiagnosticsSink())
        let request = OutgoingRequest(method: "POST", url: dataURL, body: Data("{}".utf8))
        let composed = QueuedEntry(id: UUID(), enqueuedAt: Date(), userId: composedUser, request: request)
        let decomposed = QueuedEntry(id: UUID(), enqueuedAt: Date(), userId: decomposedUser, request: request)
        try await journal.append(composed)
        try await journal.append(decomposed)
        #expect(journal.ids(forUser: composedUser) == [composed.id])
        #expect(journal.ids(forUser: decomposedUser) == [decomposed.id])
        #expect(journal.laneHeads.map(\.id) == [composed.id, decomposed.id])
        await journal.close()
    }

    @Test func removeRequestsForOneSpellingRemovesOnlyThatUsersRequests() async throws {
        // Every request is refused for good after a long Retry-After, so both stay queued meanwhile.
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 503, headers: ["Retry-After": "3600"]) }
        let queue = try fixture.queue()
        try await queue.enqueue(fixture.request(0), forUser: composedUser)
        try await queue.enqueue(fixture.request(1), forUser: decomposedUser)
        _ = await queue.waitUntilIdle()
        #expect(try await queue.removeRequests(forUser: composedUser) == 1)
        #expect(queue.count == 1)
        await queue.close()
        let reopened = try fixture.queue()
        #expect(reopened.count == 1, "the other user's request is still on disk")
        await reopened.close()
    }
}
