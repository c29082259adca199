import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationSignature

/// Each limit of a queued request at its edge: the largest request the limit allows is queued and
/// read back at relaunch; one byte (or one field) more is refused with ``SignatureQueueError/Code/entryTooLarge``
/// and nothing of it is written.
@Suite("Signature mode: the queue's limits at their edges", .hangLimit)
struct SignatureQueueEdgeTests {
    static let options = SignatureRequestQueue.Options(backoff: RetryBackoff(minimum: 10, maximum: 60))

    /// A request at a limit (`atTheLimit`) and one past it (`over`), and what is checked of the one read back.
    struct Edge: Sendable, CustomTestStringConvertible {
        let name: String
        let atTheLimit: OutgoingRequest
        let over: OutgoingRequest
        var testDescription: String { name }
    }

    static func request(url: URL = dataURL, method: String = "POST", headers: [String: String] = [:], body: Data? = Data("{}".utf8)) -> OutgoingRequest {
        OutgoingRequest(method: method, url: url, headers: headers, body: body)
    }

    static func url(length: Int) -> URL {
        let base = dataURL.absoluteString + "?p="
        return URL(string: base + String(repeating: "q", count: length - base.utf8.count))!
    }

    static func headers(count: Int) -> [String: String] {
        Dictionary(uniqueKeysWithValues: (0..<count).map { ("X-Field-\($0)", "v") })
    }

    static let edges: [Edge] = [
        Edge(name: "URL of 8192 bytes", atTheLimit: request(url: url(length: 8_192)), over: request(url: url(length: 8_193))),
        Edge(name: "64 header fields", atTheLimit: request(headers: headers(count: 64)), over: request(headers: headers(count: 65))),
        Edge(name: "header value of 8192 bytes", atTheLimit: request(headers: ["X-Value": String(repeating: "v", count: 8_192)]),
             over: request(headers: ["X-Value": String(repeating: "v", count: 8_193)])),
        Edge(name: "header name of 255 bytes", atTheLimit: request(headers: ["X-" + String(repeating: "n", count: 253): "v"]),
             over: request(headers: ["X-" + String(repeating: "n", count: 254): "v"])),
        Edge(name: "method of 32 bytes", atTheLimit: request(method: String(repeating: "M", count: 32)), over: request(method: String(repeating: "M", count: 33))),
        Edge(name: "body of 1 MiB", atTheLimit: request(body: Data(count: 1 << 20)), over: request(body: Data(count: (1 << 20) + 1))),
    ]

    @Test(arguments: edges)
    func theLargestRequestALimitAllowsIsQueuedAndReadBackAndOneMoreIsRefusedAsTooLarge(edge: Edge) async throws {
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 503) }
        let queue = try fixture.queue(Self.options)
        let kept = try await queue.enqueue(edge.atTheLimit)
        do throws(SignatureQueueError) {
            try await queue.enqueue(edge.over)
            Issue.record("\(edge.name): one past the limit was queued")
        } catch {
            #expect(error.code == .entryTooLarge, "\(edge.name): refused as too large, not as \(error.code)")
        }
        _ = await queue.waitUntilIdle()
        await queue.close()
        let reopened = try fixture.queue(Self.options)
        #expect(reopened.recovery.recoveredCount == 1)
        #expect(reopened.recovery.unreadableBytes == 0)
        await reopened.close()
        let entries = JournalCodec.decode(Array(try Data(contentsOf: fixture.fileURL))).records.compactMap { record -> QueuedEntry? in
            if case .entry(let entry) = record { return entry }
            return nil
        }
        #expect(entries.map(\.id) == [kept])
        let read = try #require(entries.first?.request)
        #expect(read.url == edge.atTheLimit.url && read.method == edge.atTheLimit.method && read.body == edge.atTheLimit.body)
        #expect(read.headers == edge.atTheLimit.headers)
    }

    @Test func aUserIDOf997BytesIsQueuedAndOneOf998IsRefusedAsTooLarge() async throws {
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 503) }
        let queue = try fixture.queue(Self.options)
        let longest = String(repeating: "u", count: SignatureAuthentication.maximumUserIDLength)
        #expect(longest.utf8.count == 997)
        try await queue.enqueue(fixture.request(1), forUser: longest)
        do throws(SignatureQueueError) {
            try await queue.enqueue(fixture.request(2), forUser: longest + "u")
            Issue.record("a user ID of 998 bytes was queued")
        } catch {
            #expect(error.code == .entryTooLarge)
        }
        #expect(queue.count == 1)
        await queue.close()
    }

    @Test func aQueueNameOf64BytesIsAcceptedAndOneOf65IsRefused() async throws {
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 503) }
        let queue = try SignatureRequestQueue(name: String(repeating: "n", count: 64), directory: fixture.directory,
                                              authentication: fixture.authentication, client: fixture.client)
        await queue.close()
        #expect(throws: SignatureQueueError.invalidConfiguration("a queue name has 1 to 64 letters, digits, '-' and '_'")) {
            try SignatureRequestQueue(name: String(repeating: "n", count: 65), directory: fixture.directory, authentication: fixture.authentication, client: fixture.client)
        }
    }
}
