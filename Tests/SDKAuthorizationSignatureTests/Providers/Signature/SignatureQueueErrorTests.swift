import Foundation
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationSignature

extension SignatureQueueError.Code {
    /// A code a later version could add, as these tests do.
    static let addedInAnExtension = SignatureQueueError.Code(rawValue: "addedInAnExtension")
}

@Suite("Signature mode: the queue's errors", .hangLimit)
struct SignatureQueueErrorTests {
    @Test func codesAreStableStrings() {
        let codes: [(SignatureQueueError.Code, String)] = [
            (.full, "full"), (.entryTooLarge, "entryTooLarge"), (.queueInUse, "queueInUse"), (.storageFailed, "storageFailed"),
            (.closed, "closed"), (.invalidConfiguration, "invalidConfiguration"),
        ]
        for (code, name) in codes {
            #expect(code.rawValue == name)
            #expect("\(code)" == name)
            #expect(SignatureQueueError.Code(rawValue: name) == code)
        }
        #expect(Set(codes.map(\.0)).count == codes.count)
    }

    @Test func anErrorFromAFactoryHasTheCodeTheMessageAndTheContextOfTheOldCase() {
        let full = SignatureQueueError.full(maximumEntries: 3, maximumBytes: 2_048)
        #expect(full.code == .full && full.maximumEntries == 3 && full.maximumBytes == 2_048)
        #expect(full.message == "The request queue is full (at most 3 requests and 2048 bytes); the request was not queued")

        let inUse = SignatureQueueError.queueInUse(name: "events")
        #expect(inUse.code == .queueInUse && inUse.name == "events")
        #expect(inUse.message == "The request queue 'events' is open in another queue or process")

        let storage = SignatureQueueError.storageFailed("could not write the queue file (errno 28)")
        #expect(storage.code == .storageFailed && storage.reason == "could not write the queue file (errno 28)")
        #expect(storage.message == "The request queue could not use its file: could not write the queue file (errno 28)")

        let tooLarge = SignatureQueueError.entryTooLarge("the body is larger than 1 MiB")
        #expect(tooLarge.code == .entryTooLarge && tooLarge.reason == "the body is larger than 1 MiB")
        #expect(tooLarge.message == "The request cannot be queued: the body is larger than 1 MiB")

        let invalid = SignatureQueueError.invalidConfiguration("maximumEntries must be from 1 to 1000000")
        #expect(invalid.code == .invalidConfiguration && invalid.reason == "maximumEntries must be from 1 to 1000000")
        #expect(invalid.message == "The request queue cannot be opened: maximumEntries must be from 1 to 1000000")

        let closed = SignatureQueueError.closed
        #expect(closed.code == .closed && closed.message == "The request queue is closed")
        #expect(closed.reason == nil && closed.name == nil && closed.maximumEntries == nil && closed.maximumBytes == nil)
    }

    @Test func aSecondQueueOnTheSameFileNamesTheQueueInItsError() async throws {
        let fixture = try QueueFixture()
        let queue = try fixture.queue()
        do {
            let second = try fixture.queue()
            Issue.record("a second queue opened the same file")
            await second.close()
        } catch let error as SignatureQueueError {
            #expect(error.code == .queueInUse)
            #expect(error.name == "test")
        }
        await queue.close()
    }

    @Test func localizedDescriptionAndErrorDescriptionAreTheMessage() {
        for error in [SignatureQueueError.full(maximumEntries: 3, maximumBytes: 2_048), .closed, .storageFailed("x")] {
            #expect(error.errorDescription == error.message)
            #expect((error as any Error).localizedDescription == error.message)
            #expect(String(describing: error) == error.message)
            #expect(String(reflecting: error) == "SignatureQueueError(\(error.code)): \(error.message)")
        }
    }

    @Test func equalityComparesTheCodeAndTheMessage() {
        #expect(SignatureQueueError.full(maximumEntries: 3, maximumBytes: 2_048) == .full(maximumEntries: 3, maximumBytes: 2_048))
        #expect(SignatureQueueError.full(maximumEntries: 3, maximumBytes: 2_048) != .full(maximumEntries: 4, maximumBytes: 2_048))
        #expect(SignatureQueueError(.addedInAnExtension, SignatureQueueError.closed.message) != .closed)
    }

    @Test func aCodeAddedInAnExtensionWorksWithEqualityAndInASwitch() {
        let error = SignatureQueueError(.addedInAnExtension, "A later version refused this.")
        #expect(error.code == .addedInAnExtension)
        #expect(error.code != .closed)
        #expect(error == SignatureQueueError(.addedInAnExtension, "A later version refused this."))
        func name(_ code: SignatureQueueError.Code) -> String {
            switch code {
            case .closed: "closed"
            case .addedInAnExtension: "added"
            default: "other"
            }
        }
        #expect(name(error.code) == "added")
        #expect(name(SignatureQueueError.closed.code) == "closed")
        #expect(name(SignatureQueueError.storageFailed("x").code) == "other")
    }

    @Test func dumpShowsTheCodeAndTheMessage() {
        var dumped = ""
        dump(SignatureQueueError.queueInUse(name: "events"), to: &dumped)
        #expect(dumped.contains("queueInUse"))
        #expect(dumped.contains("The request queue 'events' is open in another queue or process"))
    }
}
