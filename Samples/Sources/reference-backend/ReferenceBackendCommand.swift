import ArgumentParser
import Foundation
import ReferenceBackend

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension EngagementEndpoint: ExpressibleByArgument {}

/// `swift run --package-path Samples reference-backend --port 8080 --api-key KEY --project-token TOKEN`
@main
struct ReferenceBackendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reference-backend",
        abstract: "Runs the SDKAuthorization reference backend (vendor API + app login) until SIGINT/SIGTERM."
    )

    @Option(help: "Address to bind.")
    var host = "127.0.0.1"

    @Option(help: "Port to bind (0 picks a free port).")
    var port = 8080

    @Option(name: .customLong("api-key"), help: "A valid API key for `Authorization: Token <key>` (repeatable).")
    var apiKeys: [String] = []

    @Option(help: "The Engagement project token expected in the endpoint paths.")
    var projectToken: String

    @Option(name: .customLong("bearer-required"), help: "An endpoint that refuses Token and requires Bearer (repeatable), e.g. appInboxFetch.")
    var bearerRequired: [EngagementEndpoint] = []

    @Option(help: "Required `aud` of bearer tokens.")
    var audience: String?

    @Option(help: "Required `iss` of bearer tokens.")
    var issuer: String?

    @Option(help: "Lifetime of minted login tokens, in seconds.")
    var tokenLifetime: Double = 3600

    func run() async throws {
        let backend = try await ReferenceBackend.start(
            ReferenceBackend.Configuration(
                host: host,
                port: port,
                apiKeys: Set(apiKeys),
                projectToken: projectToken,
                bearerRequiredEndpoints: Set(bearerRequired),
                audience: audience,
                issuer: issuer,
                tokenLifetime: tokenLifetime
            )
        )
        // FileHandle writes are unbuffered, so a script reading the pipe sees the line at once.
        Self.say("ReferenceBackend listening on \(backend.baseURL.absoluteString)")
        Self.say("Project token: \(projectToken)")
        let received = await Self.waitForTerminationSignal()
        Self.say("Received signal \(received), stopping.")
        await backend.stop()
    }

    private static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// Suspends until SIGINT or SIGTERM arrives and returns its number.
    private static func waitForTerminationSignal() async -> Int32 {
        let signals: [Int32] = [SIGINT, SIGTERM]
        let queue = DispatchQueue(label: "reference-backend.signals")
        return await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            let resumed = Resumed()
            var sources: [any DispatchSourceSignal] = []
            for number in signals {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler {
                    if resumed.claim() { continuation.resume(returning: number) }
                }
                source.resume()
                sources.append(source)
            }
            SignalSources.keep(sources)
        }
    }
}

/// Keeps the signal sources alive for the life of the process.
private enum SignalSources {
    nonisolated(unsafe) static var sources: [any DispatchSourceSignal] = []
    static func keep(_ new: [any DispatchSourceSignal]) { sources.append(contentsOf: new) }
}

/// Ensures the continuation is resumed once, whichever signal comes first.
private final class Resumed: @unchecked Sendable {
    private let lock = NSLock()
    private var done = false

    func claim() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if done { return false }
        done = true
        return true
    }
}
