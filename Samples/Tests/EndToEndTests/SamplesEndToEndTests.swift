import AuthorizationSamples
import Foundation
import Testing

/// The samples the README points to, run against an embedded backend: every row must come out as
/// the sample expects (successes accepted, deliberate bad tokens rejected with the right code).
@Suite("Sample executables' scenarios", .serialized)
struct SamplesEndToEndTests {
    @Test func tokenModeSampleSucceedsOnEveryEndpoint() async throws {
        try await withEnvironment { environment, _ in
            let rows = try await TokenModeSample.run(environment)
            #expect(rows.count == 5)
            for row in rows {
                #expect(row.asExpected, "\(row.endpoint): \(row.verdict)")
                #expect(row.verdict == "200 accepted")
                #expect(!row.header.contains(environment.apiKey))
            }
        }
    }

    @Test func customerTokenModeSampleShowsSuccessAndEachRejection() async throws {
        try await withEnvironment(bearerRequired: [.appInboxFetch, .appInboxMarkAsRead]) { environment, _ in
            let rows = try await CustomerTokenModeSample.run(environment)
            #expect(rows.map(\.verdict) == [
                "200 accepted", "200 accepted", "200 accepted",
                "401 token_expired", "401 invalid_signature", "403 subject_mismatch",
                "not sent: provider gave no token",
            ])
            for row in rows { #expect(row.asExpected, "\(row.mode): \(row.verdict)") }
        }
    }

    @Test func misconfigurationSampleShowsTheDocumentedMessages() async throws {
        try await withEnvironment { environment, _ in
            let rows = MisconfigurationSample.run(environment)
            #expect(rows.map(\.verdict) == [
                "Advanced authorization flag has been enabled without provider",
                "Class ExponeaAuthProvider does not conform to AuthorizationProviderType",
                "Registered MyApp.ExampleAuthProvider class has not been found",
                "Basic authentication is not supported by mobile SDK for security reasons.",
            ])
            for row in rows { #expect(row.asExpected, "\(row.endpoint)") }
        }
    }
}
