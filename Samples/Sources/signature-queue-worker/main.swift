// A separate process around the signature mode's durable queue, for the crash test and for measuring.
//
//   signature-queue-worker enqueue --directory DIR --backend-url URL --count N --user USER --signature JWT [--send-delay-ms MS]
//       Queues N data requests (request IDs crash-0 ... crash-<N-1>) for USER, prints "enqueued N", then
//       sends them, each after MS milliseconds, and prints "flushed" when the queue is empty. The
//       crash test kills it with SIGKILL while it sends.
//   signature-queue-worker measure [--count N] [--concurrency C] [--directory DIR]
//       Durable enqueues per second (one at a time, and C at a time), then the time to reopen a
//       queue holding N requests. Nothing is sent (the transport is offline).
import AuthorizationSamples
import Foundation
import SDKAuthorization
import SDKAuthorizationSignature

let arguments = Array(CommandLine.arguments.dropFirst())
func value(_ flag: String) -> String? {
    guard let index = arguments.firstIndex(of: flag), arguments.indices.contains(index + 1) else { return nil }
    return arguments[index + 1]
}
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("signature-queue-worker: \(message)\n".utf8))
    exit(2)
}
func say(_ line: String) {
    FileHandle.standardOutput.write(Data("\(line)\n".utf8))
}

/// Sends through URLSession after a pause, so that a test can kill the process mid-flush.
struct SlowTransport: HTTPTransport {
    let delay: UInt64
    let wrapped = URLSessionHTTPTransport(timeout: 15)
    func send(_ request: OutgoingRequest) async throws -> ServerResponse {
        try await Task.sleep(nanoseconds: delay)
        return try await wrapped.send(request)
    }
}

switch arguments.first {
case "enqueue":
    guard let directory = value("--directory"), let backend = value("--backend-url").flatMap(URL.init(string:)),
          let count = value("--count").flatMap(Int.init), let user = value("--user"), let signature = value("--signature")
    else { fail("enqueue needs --directory, --backend-url, --count, --user and --signature") }
    let delay = UInt64(value("--send-delay-ms").flatMap(Int.init) ?? 0) * 1_000_000
    let authentication = try SignatureAuthentication(diagnostics: StandardErrorDiagnosticsSink(minimumLevel: .warning))
    try authentication.changeUser(user, signature: signature)
    let client = try SignatureModeSample.makeClient(baseURL: backend, authentication: authentication, transport: SlowTransport(delay: delay))
    let queue = try SignatureRequestQueue(name: "crash", directory: URL(fileURLWithPath: directory), authentication: authentication, client: client,
                                          diagnostics: StandardErrorDiagnosticsSink(minimumLevel: .warning))
    for index in 0..<count {
        try await queue.enqueue(SignatureModeSample.dataRequest(baseURL: backend, userId: user, requestId: "crash-\(index)"))
    }
    say("enqueued \(count)")
    while await queue.flush() > 0 {}
    say("flushed")
    await queue.close()

case "measure":
    let count = value("--count").flatMap(Int.init) ?? 100_000
    let concurrency = value("--concurrency").flatMap(Int.init) ?? 64
    let directory = URL(fileURLWithPath: value("--directory") ?? NSTemporaryDirectory()).appendingPathComponent("sdkauth-queue-measure-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let authentication = try SignatureAuthentication(diagnostics: StandardErrorDiagnosticsSink(minimumLevel: .error))
    try authentication.changeUser("user-1")
    let client = try SignatureModeSample.makeClient(baseURL: URL(string: "http://127.0.0.1:9")!, authentication: authentication, transport: OfflineTransport())
    let options = SignatureRequestQueue.Options(maximumEntries: max(count, 1) + 10_000, maximumBytes: 1 << 30)
    func open(_ name: String) throws -> SignatureRequestQueue {
        try SignatureRequestQueue(name: name, directory: directory, authentication: authentication, client: client, options: options,
                                  diagnostics: StandardErrorDiagnosticsSink(minimumLevel: .error))
    }
    let request = SignatureModeSample.dataRequest(baseURL: URL(string: "http://127.0.0.1:9")!, userId: "user-1", requestId: "measure")
    func seconds(_ work: () async throws -> Void) async rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try await work()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    // One at a time: each enqueue waits for its own write and flush.
    let sequential = try open("sequential")
    let sequentialCount = min(count, 2_000)
    let sequentialTime = try await seconds { for _ in 0..<sequentialCount { try await sequential.enqueue(request) } }
    await sequential.close()
    say("durable enqueues, one at a time: \(sequentialCount) in \(String(format: "%.3f", sequentialTime)) s = \(Int(Double(sequentialCount) / sequentialTime))/s")

    // C at a time: concurrent enqueues share writes and flushes.
    let concurrent = try open("concurrent")
    let concurrentTime = try await seconds {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<concurrency {
                group.addTask {
                    for _ in stride(from: worker, to: count, by: concurrency) { try await concurrent.enqueue(request) }
                }
            }
            try await group.waitForAll()
        }
    }
    await concurrent.close()
    say("durable enqueues, \(concurrency) at a time: \(count) in \(String(format: "%.3f", concurrentTime)) s = \(Int(Double(count) / concurrentTime))/s")
    let fileSize = (try? FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("concurrent.queue").path)[.size] as? Int) ?? 0
    var recoveryTimes: [Double] = []
    for _ in 0..<3 {
        var reopened: SignatureRequestQueue?
        let time = try await seconds { reopened = try open("concurrent") }
        guard let queue = reopened, queue.recovery.recoveredCount == count else { fail("recovered \(reopened?.recovery.recoveredCount ?? -1) of \(count)") }
        await queue.close()
        recoveryTimes.append(time)
    }
    say("recovery of \(count) queued requests (\(fileSize / 1_048_576) MiB file), three opens: \(recoveryTimes.map { String(format: "%.3f s", $0) }.joined(separator: ", "))")

default:
    fail("usage: signature-queue-worker enqueue ... | measure [--count N] [--concurrency C]")
}
