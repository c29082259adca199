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
extension ReferenceBackend.SignatureEnforcement: ExpressibleByArgument {}

/// `swift run --package-path Samples reference-backend --port 8080 --api-key KEY --project-token TOKEN`
@main
struct ReferenceBackendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reference-backend",
        abstract: "Runs the SDKAuthorization reference backend (vendor API + app login) until SIGINT/SIGTERM.",
        discussion: """
            The test routes need no credentials: POST /app/login mints valid tokens for any user, \
            POST /app/braze-signature valid SDK signatures, PUT /__braze/apps/<appId>/enforcement \
            switches an app's signature enforcement, GET /__records answers every recorded request \
            with its full Authorization header, and /__redirect redirects anywhere. They are served only when the server is bound to a \
            loopback address (127.0.0.0/8, ::1, localhost); on any other address (e.g. --host 0.0.0.0) \
            they answer 404 unless --allow-test-routes is given.

            Limits: Authorization headers over 8192 bytes are refused (401 token_too_large) before \
            any decoding, request bodies over 1 MiB with 413 body_too_large, and token lifetimes \
            (--token-lifetime, lifetimeSeconds of /app/login) must be within 1...86400 seconds.

            SDK signatures (Braze style): POST /braze/apps/reference-app/data with \
            X-Braze-Auth-Signature: <RS256 JWT> and {"user_id", "request_id", "events"} answers 201, \
            201 with an auth_error (optional), or 401 {"auth_error": {"error_code", "reason"}, "user_id"} \
            (required); enforcement is disabled unless --signature-enforcement says otherwise (Braze's \
            default too).
            """
    )

    @Option(help: "Address to bind. The test routes are served only on a loopback address (see --allow-test-routes).")
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

    @Option(help: "Lifetime of minted login tokens, in seconds (1...86400).")
    var tokenLifetime: Double = 3600

    @Option(help: "The secret shared with the host app for signing payloads that POST /ccai/exchange accepts (HS256/HS384).")
    var exchangeSecret = "sample-exchange-secret"

    @Option(help: "Lifetime of the auth tokens /ccai/exchange issues, in seconds (1...86400).")
    var exchangeTokenLifetime: Double = 600

    @Option(
        help: """
            How the app reference-app checks SDK signatures: disabled (no check; the default, as in Braze), \
            optional (verify, report, accept) or required (verify, refuse with 401).
            """
    )
    var signatureEnforcement: ReferenceBackend.SignatureEnforcement = .disabled

    @Flag(
        name: .customLong("allow-test-routes"),
        help: """
            Serve the test routes (POST /app/login, POST /app/braze-signature, PUT /__braze/apps/<appId>/enforcement, \
            GET /__records, /__redirect) on a non-loopback address too. Anyone who can reach the server can then mint \
            tokens and signatures, switch enforcement off and read every recorded Authorization header.
            """
    )
    var allowTestRoutes = false

    func validate() throws {
        guard (0...65535).contains(port) else {
            throw ValidationError("--port must be in 0...65535.")
        }
        let range = ReferenceBackend.tokenLifetimeRange
        guard range.contains(tokenLifetime) else {
            throw ValidationError("--token-lifetime must be a number of seconds in \(Int64(range.lowerBound))...\(Int64(range.upperBound)).")
        }
        guard range.contains(exchangeTokenLifetime) else {
            throw ValidationError("--exchange-token-lifetime must be a number of seconds in \(Int64(range.lowerBound))...\(Int64(range.upperBound)).")
        }
        guard !exchangeSecret.isEmpty else { throw ValidationError("--exchange-secret must not be empty.") }
    }

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
                tokenLifetime: tokenLifetime,
                allowTestRoutesOnAnyInterface: allowTestRoutes,
                exchangeSecret: exchangeSecret,
                exchangeTokenLifetime: exchangeTokenLifetime,
                signatureApps: [ReferenceBackend.SignatureApp(id: "reference-app", enforcement: signatureEnforcement)]
            )
        )
        // FileHandle writes are unbuffered, so a script reading the pipe sees the line at once.
        Self.say("ReferenceBackend listening on \(backend.baseURL.absoluteString)")
        Self.say("Project token: \(projectToken)")
        Self.say("Signature app: reference-app, enforcement \(signatureEnforcement.rawValue) (POST /braze/apps/reference-app/data)")
        if backend.testRoutesEnabled {
            let scope = allowTestRoutes ? "any interface (--allow-test-routes)" : "loopback"
            Self.say("Test routes (/app/login, /app/braze-signature, /__braze, /__records, /__redirect): served on \(scope)")
        } else {
            Self.say(
                "Test routes (/app/login, /app/braze-signature, /__braze, /__records, /__redirect): off, \(host) is not a loopback address (see --allow-test-routes)"
            )
        }
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
