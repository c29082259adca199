import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationSignature
import SDKAuthorizationModeKit

/// `onUndeliverable` is an app callback: it runs off the queue's sender, in order, after the request
/// is removed from the file, so a callback that blocks never holds the queue's sending.
@Suite("Signature mode: handing given-up requests to the app", .hangLimit)
struct SignatureUndeliverableDeliveryTests {
    @Test func anOnUndeliverableCallbackThatBlocksDoesNotHoldTheQueuesSending() async throws {
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 400) }
        let release = DispatchSemaphore(value: 0)
        let received = Locked<[UUID]>([])
        let queue = try SignatureRequestQueue(
            name: "test", directory: fixture.directory, authentication: fixture.authentication, client: fixture.client,
            options: .init(), clock: fixture.clock, diagnostics: fixture.sink, random: { 0.5 },
            onUndeliverable: { item in
                release.wait()   // an app callback that blocks until the test lets it go
                received.withLock { $0.append(item.id) }
            },
            bootSession: Array("boot-1".utf8)
        )
        var ids: [UUID] = []
        for number in 0..<3 { ids.append(try await queue.enqueue(fixture.request(number))) }
        #expect(await queue.waitUntilIdle(deliveries: false) == 0, "every request was sent and given up while the first callback blocks")
        #expect(fixture.transport.requests.count == 3)
        #expect(received.withLock { $0.isEmpty })
        for _ in ids { release.signal() }
        await queue.undeliverableDelivered()
        #expect(received.withLock { $0 } == ids, "each handed over once, in the order given up")
        await queue.close()
    }

    @Test func aRequestHandedToOnUndeliverableIsAlreadyGoneFromTheFile() async throws {
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 400) }
        let countsSeen = Locked<[Int]>([])
        let directory = fixture.directory
        let queue = try SignatureRequestQueue(
            name: "test", directory: directory, authentication: fixture.authentication, client: fixture.client,
            options: .init(), clock: fixture.clock, diagnostics: fixture.sink, random: { 0.5 },
            onUndeliverable: { item in
                let bytes = (try? Data(contentsOf: directory.appendingPathComponent("test.queue"))).map(Array.init) ?? []
                let live = Set(JournalCodec.decode(bytes).records.compactMap { record -> UUID? in
                    if case .entry(let entry) = record { return entry.id }
                    return nil
                })
                let done = Set(JournalCodec.decode(bytes).records.compactMap { record -> UUID? in
                    if case .done(let id) = record { return id }
                    return nil
                })
                countsSeen.withLock { $0.append(live.subtracting(done).contains(item.id) ? 1 : 0) }
            },
            bootSession: Array("boot-1".utf8)
        )
        try await queue.enqueue(fixture.request(1))
        _ = await queue.waitUntilIdle()
        #expect(countsSeen.withLock { $0 } == [0], "the file no longer holds it as live when the app hears of it")
        await queue.close()
    }
}
