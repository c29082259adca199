import AuthorizationSamples
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ReferenceBackend
import SDKAuthorization
import SDKAuthorizationSignature
import SDKAuthorizationTesting
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Sends through URLSession and remembers, for each request, its idempotency key and body `request_id`.
final class KeyRecordingTransport: HTTPTransport, Sendable {
    private let wrapped = URLSessionHTTPTransport(timeout: 15)
    let sent = Mutex<[(key: String?, requestId: String?)]>([])

    func send(_ request: OutgoingRequest) async throws -> ServerResponse {
        let requestId = request.body.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }?["request_id"] as? String
        sent.withLock { $0.append((request.value(forHeader: "Idempotency-Key"), requestId)) }
        return try await wrapped.send(request)
    }
}

/// The `signature-queue-worker` executable built beside this test bundle.
func signatureQueueWorker() throws -> URL {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = directory.appendingPathComponent("signature-queue-worker")
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        directory.deleteLastPathComponent()
    }
    throw SampleError("signature-queue-worker was not built beside \(CommandLine.arguments[0]); run swift build --package-path Samples first")
}

@Suite("Signature mode, end to end over loopback", .timeLimit(.minutes(3)))
struct SignatureModeEndToEndTests {
    @Test func signatureModeSampleShowsEveryCodeTheNewSignatureTheRestartAndTheEnforcementStates() async throws {
        try await withEnvironment { environment, backend in
            let rows = try await SignatureModeSample.run(environment)
            #expect(rows.count == 11)
            for row in rows { #expect(row.asExpected, "\(row.mode): \(row.verdict)") }
            #expect(rows.map(\.verdict) == [
                "201 accepted x3",
                "401 EXPIRED (22), then 201 accepted",
                "401 NO_MATCHING_PUBLIC_KEYS (27), then 201 accepted",
                "401 INCORRECT_ALGORITHM (24), then 201 accepted",
                "401 SUBJECT_MISMATCH (21), then 201 accepted",
                "401 EXPIRATION_REQUIRED (10), then 201 accepted",
                "401 MISSING_TOKEN (26), then 201 accepted",
                "201 accepted as user-8",
                "201 accepted, reported EXPIRED (22) optional",
                "201 accepted, reported EXPIRED (22) optional",
                "201 accepted, nothing reported",
            ])
            // Each request reached the backend exactly once as accepted: 3 + 6 + 1 + 1 + 1 + 1.
            let deliveries = backend.signatureDeliveries()
            #expect(deliveries.count == 13)
            #expect(deliveries.values.allSatisfy { $0 == 1 })
            #expect(deliveries["user-12-request"] == 1, "the directly sent request")
            #expect(backend.signatureErrorReport(appId: SignatureModeSample.appId) == [22: 3, 27: 1, 24: 1, 21: 1, 10: 1, 26: 1])
            #expect(backend.signatureEnforcement(appId: SignatureModeSample.appId) == .disabled, "the sample puts the backend's default back")
        }
    }

    @Test func anExpiredSignatureReachesTheSubscriberWith22AndTheQueuedRequestIsAcceptedWithTheNewOne() async throws {
        try await withEnvironment { environment, backend in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sdkauth-e2e-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let authentication = try SignatureAuthentication(diagnostics: RecordingDiagnosticsSink())
            let transport = KeyRecordingTransport()
            let client = try SignatureModeSample.makeClient(baseURL: environment.baseURL, authentication: authentication, transport: transport)
            // The backend starts Disabled (Braze's default); this test is about Required.
            #expect(backend.signatureEnforcement(appId: SignatureModeSample.appId) == .disabled)
            try backend.setSignatureEnforcement(.required, appId: SignatureModeSample.appId)
            let expired = try backend.issueSignature(userId: "user-1", variant: .expired)
            let fresh = try backend.issueSignature(userId: "user-1")
            try authentication.changeUser("user-1", signature: expired)
            let events = Mutex<[SignatureFailure]>([])
            let subscription = authentication.subscribeToFailures { failure in events.withLock { $0.append(failure) } }
            let queue = try SignatureRequestQueue(name: "e2e", directory: directory, authentication: authentication, client: client,
                                                  diagnostics: RecordingDiagnosticsSink())
            try await queue.enqueue(SignatureModeSample.dataRequest(baseURL: environment.baseURL, userId: "user-1", requestId: "r-1"))
            #expect(await queue.flush() == 1, "rejected and kept")
            await authentication.failuresDelivered()
            let failure = try #require(events.withLock { $0.first })
            #expect(failure.errorCode == .expired && failure.errorCode.rawValue == 22)
            #expect(failure.signature == expired, "the failed JWT itself")
            #expect(failure.userId == "user-1" && !failure.optional)
            #expect(!failure.reason.isEmpty)

            try authentication.setSignature(fresh, for: "user-1")
            #expect(await queue.flush() == 0)
            #expect(backend.signatureDeliveries() == ["r-1": 1])
            let signatures = await backend.records().filter { $0.path.hasSuffix("/data") }.map(\.signature)
            #expect(signatures == [expired, fresh], "the retry carried the new signature, not the one the request first carried")

            // Optional enforcement: verified and reported, but accepted.
            try backend.setSignatureEnforcement(.optional, appId: SignatureModeSample.appId)
            try authentication.setSignature(expired, for: "user-1")
            try await queue.enqueue(SignatureModeSample.dataRequest(baseURL: environment.baseURL, userId: "user-1", requestId: "r-2"))
            #expect(await queue.flush() == 0)
            await authentication.failuresDelivered()
            let optional = try #require(events.withLock { $0.last })
            #expect(optional.optional && optional.errorCode == .expired && optional.signature == expired)
            #expect(backend.signatureDeliveries()["r-2"] == 1)
            #expect(events.withLock { $0.count } == 2)

            // The same report on a request sent through the URLSession convenience, not queued.
            let other = try backend.issueSignature(userId: "user-2", variant: .expired)
            try authentication.changeUser("user-2", signature: other)
            var direct = URLRequest(url: SignatureModeSample.dataRequest(baseURL: environment.baseURL, userId: "user-2", requestId: "r-3").url)
            direct.httpMethod = "POST"
            direct.setValue("application/json", forHTTPHeaderField: "Content-Type")
            direct.httpBody = SignatureModeSample.dataRequest(baseURL: environment.baseURL, userId: "user-2", requestId: "r-3").body
            let (_, answer) = try await client.authorizer.data(for: direct)
            #expect(answer.statusCode == 201)
            await authentication.failuresDelivered()
            #expect(events.withLock { $0.count } == 3, "reported once")
            let reported = try #require(events.withLock { $0.last })
            #expect(reported.optional && reported.errorCode == .expired && reported.userId == "user-2" && reported.signature == other)
            await queue.close()
            subscription.cancel()
        }
    }

    @Test func aQueueKilledMidFlushLosesNothingAndANewProcessSendsEachRequestOnceOrReportsIt() async throws {
        try await withEnvironment { environment, backend in
            let count = 200
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sdkauth-crash-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let signature = try backend.issueSignature(userId: "crash-user")
            let worker = Process()
            worker.executableURL = try signatureQueueWorker()
            worker.arguments = ["enqueue", "--directory", directory.path, "--backend-url", environment.baseURL.absoluteString,
                                "--count", "\(count)", "--user", "crash-user", "--signature", signature, "--send-delay-ms", "15"]
            let output = Pipe()
            worker.standardOutput = output
            try worker.run()
            // Kill it with SIGKILL once it is sending: some requests delivered, most not.
            let started = Date()
            while backend.signatureDeliveries().count < 20, worker.isRunning, Date().timeIntervalSince(started) < 120 {
                try await Task.sleep(nanoseconds: 5_000_000)
            }
            kill(worker.processIdentifier, SIGKILL)
            worker.waitUntilExit()
            #expect(worker.terminationReason == .uncaughtSignal, "killed, not finished")
            let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(printed.contains("enqueued \(count)") && !printed.contains("flushed"))
            let beforeCrash = backend.signatureDeliveries()
            #expect(beforeCrash.count >= 20 && beforeCrash.count < count, "killed mid-flush: \(beforeCrash.count) of \(count) delivered")

            // A new process: open the same queue, send what is left.
            let authentication = try SignatureAuthentication(diagnostics: RecordingDiagnosticsSink())
            try authentication.changeUser("crash-user", signature: signature)
            let transport = KeyRecordingTransport()
            let sink = RecordingDiagnosticsSink()
            let client = try SignatureModeSample.makeClient(baseURL: environment.baseURL, authentication: authentication, transport: transport)
            let queue = try SignatureRequestQueue(name: "crash", directory: directory, authentication: authentication, client: client, diagnostics: sink)
            let recovery = queue.recovery
            #expect(recovery.recoveredCount + beforeCrash.count >= count, "nothing lost: \(recovery.recoveredCount) recovered, \(beforeCrash.count) delivered")
            #expect(recovery.inDoubt.count <= 1, "one request is sent at a time")
            while await queue.flush() > 0 {}
            await queue.close()

            let deliveries = backend.signatureDeliveries()
            let inDoubtRequestIds = Set(transport.sent.withLock { sent in
                sent.filter { entry in recovery.inDoubt.contains { $0.uuidString == entry.key } }.compactMap(\.requestId)
            })
            for index in 0..<count {
                let id = "crash-\(index)"
                let delivered = deliveries[id] ?? 0
                #expect(delivered >= 1, "\(id) was lost")
                if delivered > 1 {
                    #expect(inDoubtRequestIds.contains(id), "\(id) was sent \(delivered) times without being reported in doubt")
                }
            }
            #expect(deliveries.count == count)
            #expect(deliveries.values.filter { $0 > 1 }.count <= recovery.inDoubt.count)
            if !recovery.inDoubt.isEmpty {
                #expect(sink.messages(at: .warning).contains { $0.contains(recovery.inDoubt[0].uuidString) }, "the in-doubt request is named in the diagnostics")
            }
        }
    }
}
