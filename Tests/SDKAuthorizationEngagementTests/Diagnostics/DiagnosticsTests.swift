import Foundation
import SDKAuthorizationModeKit
import SDKAuthorizationTesting
import EngagementTestSupport
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationEngagement

@Suite("Diagnostics and the manual clock", .hangLimit)
struct DiagnosticsTests {
    @Test func levelsAreOrdered() {
        #expect(Diagnostic.Level.debug < .info)
        #expect(Diagnostic.Level.warning < .error)
        #expect(Diagnostic(level: .error, message: "x").description == "[SDKAuthorization] error: x")
    }

    @Test func aStartUpErrorIsThrownWithItsMessageAndNotAlsoLogged() {
        // An app that prints its error shows it once.
        let sink = RecordingDiagnosticsSink()
        #expect(throws: ConfigurationError.missingKey("authorization")) {
            try AuthorizedHTTPClient(
                configuration: AuthorizationConfiguration(projectToken: "project", baseURL: "https://api.example.com", authorization: nil),
                transport: RecordingTransport(),
                diagnostics: sink
            )
        }
        #expect(sink.diagnostics == [])
    }

    @Test func aDocumentedLookupMessageIsThrownAndLoggedAtErrorLevelAsSPECSays() {
        // SPEC.md: the vendors' provider-lookup messages are logged at error level and carried by
        // the configuration error.
        let sink = RecordingDiagnosticsSink()
        #expect(throws: ConfigurationError.advancedAuthEnabledWithoutProvider) {
            try AuthorizedHTTPClient(
                configuration: engagementConfiguration(advancedAuthEnabled: true),
                transport: RecordingTransport(),
                diagnostics: sink
            )
        }
        #expect(sink.diagnostics == [Diagnostic(level: .error, message: "Advanced authorization flag has been enabled without provider")])
    }

    @Test func manualClockWakesASleeperAtItsDeadlineAndNotBefore() async throws {
        let clock = ManualClock()
        let deadline = clock.monotonicNow() + 10
        let woke = Locked(false)
        let sleeper = Task {
            try await clock.sleep(untilMonotonic: deadline)
            woke.withLock { $0 = true }
        }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: 9.999)
        #expect(clock.sleeperCount == 1)
        #expect(!woke.withLock { $0 })
        clock.advance(by: 0.001)
        try await sleeper.value
        #expect(woke.withLock { $0 })
    }

    @Test func manualClockSleeperIsCancellable() async {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(untilMonotonic: clock.monotonicNow() + 10) }
        await clock.waitForSleepers(count: 1)
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleeperCount == 0)
    }
}
