import AuthorizationSamples
import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit
import SDKAuthorizationEngagement
import Testing

/// The samples the README points to, run against an embedded backend: every row must come out as
/// the sample expects (successes accepted, deliberate bad tokens rejected with the right code).
@Suite("Sample executables' scenarios", .serialized, .timeLimit(.minutes(3)))
struct SamplesEndToEndTests {
    @Test func readmeQuickStartSendsTheTokenThroughURLSessionToTheRulesHostAndToNoOther() async throws {
        try await withEnvironment { environment, _ in
            let rows = try await QuickStartSample.run(environment)
            #expect(rows.map(\.verdict) == ["200 accepted, sub reader-quick-start", "401 missing_authorization"])
            #expect(rows.first?.header.hasPrefix("Bearer eyJ") == true)
            #expect(rows.last?.header == "(none)")
            for row in rows { #expect(row.asExpected, "\(row.mode): \(row.verdict)") }
        }
    }

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

    @Test func misconfigurationSampleShowsAllSixDocumentedLookupMessagesAndTheBasicRefusal() async throws {
        try await withEnvironment { environment, _ in
            let rows = MisconfigurationSample.run(environment)
            #expect(rows.map(\.verdict) == [
                "Advanced authorization flag has been enabled without provider",
                "Class ExponeaAuthProvider does not conform to AuthorizationProviderType",
                "Class ExponeaAuthProvider does not conform to NSObject",
                "Advanced auth has been enabled but provider has not been found",
                "Registered MyApp.NotAProvider class has to implement SDKAuthorization.AuthorizationProviderType",
                "Registered MyApp.ExampleAuthProvider class has not been found",
                "Basic authentication is not supported by mobile SDK for security reasons.",
            ])
            for row in rows { #expect(row.asExpected, "\(row.endpoint)") }
        }
    }

    @Test func httpStackSampleAuthorizesURLSessionRequestsAndRequestsMatchedByURL() async throws {
        try await withEnvironment(bearerRequired: [.appInboxFetch, .appInboxMarkAsRead]) { environment, backend in
            let rows = try await HTTPStackSample.run(environment)
            #expect(rows.map(\.verdict) == ["200 accepted", "200 accepted", "200 accepted", "200 accepted"])
            for row in rows { #expect(row.asExpected, "\(row.mode): \(row.verdict)") }
            let engagement = await backend.records().filter { !$0.path.hasPrefix("/app/") }
            #expect(engagement.map(\.path).map { $0.components(separatedBy: "/").last ?? "" } == ["fetch", "events", "fetch", "fetch"])
            #expect(engagement.map { $0.authorization?.components(separatedBy: " ").first } == ["Bearer", "Token", "Bearer", "Bearer"])
            // Each customer's request carried a token whose subject is that customer.
            let subjects = engagement.filter { $0.authorization?.hasPrefix("Bearer ") == true }.compactMap { record -> String? in
                guard let token = record.authorization?.dropFirst("Bearer ".count) else { return nil }
                return try? JWTClaims(decoding: String(token)).subject
            }
            #expect(subjects == ["reader-1", "reader-2", "reader-3"])
        }
    }

    @Test func tokenExchangeModeSampleSignsExchangesRenewsOnceAndShowsEachRefusal() async throws {
        try await withEnvironment { environment, backend in
            let rows = try await TokenExchangeModeSample.run(environment)
            let expected: [String] = [
                "200 accepted", "200 accepted", "200 accepted", "200 accepted", "200 accepted", "401 unsigned_payload", "401 invalid_signature",
                "400 invalid_phone",
            ]
            let verdicts: [String] = rows.map(\.verdict)
            #expect(verdicts == expected)
            #expect(rows.first?.mode == "token exchange (100 calls, 1 signing)")
            #expect(rows[3].mode == #"token exchange (vendor sample, phone "")"# && rows[4].mode == "token exchange (vendor Ruby sample, iat as digits)")
            for row in rows { #expect(row.asExpected, "\(row.mode): \(row.verdict)") }
            let records = await backend.records()
            // One exchange for the 100 concurrent calls, one after the platform expired the token,
            // one after logout, one each for the vendor samples' payloads (phone "", iat as digits),
            // then the two refused payloads and the phone the platform judged (not E.164).
            #expect(records.filter { $0.path == "/ccai/exchange" }.count == 8)
            let chats = records.filter { $0.path == "/ccai/chats" }
            let expectedChats = 100 + 1 + 2 + 1 + 2   // 100 + 1 more, the expired one and its retry, after logout, the vendor samples'
            #expect(chats.count == expectedChats)
            #expect(chats.allSatisfy { $0.authorization?.hasPrefix("Bearer ") == true })
            #expect(Set(chats.compactMap(\.authorization)).count == 5)
        }
    }
}
