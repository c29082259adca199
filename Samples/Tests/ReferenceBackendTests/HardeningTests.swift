import Foundation
import ReferenceBackend
import Testing

/// The backend runs on users' machines: the test routes stay on loopback, every input is bounded
/// and checked before it is parsed, and no request makes it trap.
@Suite("Reference backend hardening", .timeLimit(.minutes(3)))
struct HardeningTests {
    // MARK: Token lifetimes

    @Test("POST /app/login with lifetimeSeconds 1e300 is refused with 400 and the backend keeps serving")
    func loginWithAHugeLifetimeIsRefusedWithoutCrashing() async throws {
        try await withBackend { backend in
            let answer = try await send(backend, "/app/login", body: #"{"userId":"u1","variant":"valid","lifetimeSeconds":1e300}"#)
            expectFailure(answer, status: 400, code: .invalidRequest)
            #expect(answer.reply.message?.contains("lifetimeSeconds") == true)
            // Still alive, and still minting within the range.
            let after = try await send(backend, "/app/login", body: #"{"userId":"u1","lifetimeSeconds":120}"#)
            #expect(after.status == 200, "answer was \(after.raw)")
        }
    }

    @Test(
        "POST /app/login refuses a zero, negative, fractional-below-one, too long or non-numeric lifetime with 400",
        arguments: ["0", "-5", "0.5", "86401", "-1e300", "1e400", #""3600""#, "true", "[]", "{}"]
    )
    func loginWithAnOutOfRangeOrNonNumericLifetimeIsRefused(_ lifetime: String) async throws {
        try await withBackend { backend in
            let answer = try await send(backend, "/app/login", body: #"{"userId":"u1","lifetimeSeconds":\#(lifetime)}"#)
            expectFailure(answer, status: 400, code: .invalidRequest)
        }
    }

    @Test("POST /app/login accepts the bounds of the lifetime range, 1 and 86400 seconds")
    func loginAcceptsTheBoundsOfTheLifetimeRange() async throws {
        #expect(ReferenceBackend.tokenLifetimeRange == 1...86_400)
        try await withBackend { backend in
            for lifetime in [1, 86_400] {
                let answer = try await send(backend, "/app/login", body: #"{"userId":"u1","lifetimeSeconds":\#(lifetime)}"#)
                #expect(answer.status == 200, "answer was \(answer.raw)")
                let expiresAt = try #require(answer.reply.expiresAt)
                #expect(abs(Double(expiresAt) - Date().timeIntervalSince1970 - Double(lifetime)) < 5)
            }
        }
    }

    @Test("issueToken throws TokenLifetimeError for a lifetime outside the range, NaN or infinity")
    func issueTokenRefusesALifetimeOutsideTheRange() async throws {
        try await withBackend { backend in
            for lifetime in [0, -5, 1e300, 86_401, .infinity, -.infinity] as [TimeInterval] {
                #expect(throws: ReferenceBackend.TokenLifetimeError(lifetime: lifetime)) {
                    try backend.issueToken(userId: "u1", lifetime: lifetime)
                }
            }
            #expect(throws: ReferenceBackend.TokenLifetimeError.self) { try backend.issueToken(userId: "u1", lifetime: .nan) }
            let longest = try backend.issueToken(userId: "u1", lifetime: 86_400)
            #expect(!longest.isEmpty)
        }
    }

    @Test("start refuses a token lifetime or port out of range before binding anything")
    func startRefusesAnOutOfRangeConfiguration() async throws {
        let bad: [ReferenceBackend.Configuration] = [
            .init(tokenLifetime: 1e300),
            .init(tokenLifetime: -5),
            .init(tokenLifetime: .nan),
            .init(port: 70_000),
            .init(port: -1),
        ]
        for configuration in bad {
            do {
                let backend = try await ReferenceBackend.start(configuration)
                await backend.stop()
                Issue.record("started with tokenLifetime \(configuration.tokenLifetime), port \(configuration.port)")
            } catch ReferenceBackend.StartError.invalidConfiguration(let problem) {
                #expect(!problem.isEmpty)
            }
        }
    }

    // MARK: Test routes only on loopback

    @Test("Loopback means 127.0.0.0/8, ::1 or localhost in any spelling; nothing else, and no name is resolved")
    func loopbackClassification() {
        for host in [
            "127.0.0.1", "127.255.3.4", "localhost", "LOCALHOST", "localhost.", "::1", "[::1]", "0:0:0:0:0:0:0:1",
            "::1%lo", "::ffff:127.0.0.1",
        ] {
            #expect(ReferenceBackend.isLoopback(host), "\(host)")
        }
        for host in [
            "0.0.0.0", "::", "[::]", "192.168.1.10", "10.0.0.1", "128.0.0.1", "126.255.255.255", "::2", "::ffff:10.0.0.1",
            "localhost.example.com", "127.0.0.1.nip.io", "my-laptop", "", "127.1", "127.0.0.1:80",
        ] {
            #expect(!ReferenceBackend.isLoopback(host), "\(host)")
        }
    }

    @Test("On loopback the test routes are served")
    func testRoutesAreServedOnLoopback() async throws {
        for host in ["127.0.0.1", "localhost"] {
            try await withBackend(.init(host: host, apiKeys: [testAPIKey], projectToken: testProjectToken)) { backend in
                #expect(backend.testRoutesEnabled)
                let login = try await send(backend, "/app/login", body: #"{"userId":"u1"}"#)
                let records = try await send(backend, "/__records", method: "GET", body: nil)
                #expect(login.status == 200, "\(host): \(login.raw)")
                #expect(records.status == 200, "\(host): \(records.raw)")
            }
        }
    }

    @Test("Bound to 0.0.0.0, /app/login, /__records and /__redirect answer 404 like an unknown route and record nothing")
    func testRoutesAnswer404WhenBoundToANonLoopbackAddress() async throws {
        let configuration = ReferenceBackend.Configuration(host: "0.0.0.0", apiKeys: [testAPIKey], projectToken: testProjectToken)
        try await withBackend(configuration) { backend in
            #expect(!backend.testRoutesEnabled)
            let loopback = try #require(URL(string: "http://127.0.0.1:\(backend.port)"))
            let unknown = try await send(to: loopback, "/no-such-route")
            #expect(unknown.status == 404)
            let target = "http%3A%2F%2Fexample.com%2F"
            let answers = [
                try await send(to: loopback, "/app/login", body: Data(#"{"userId":"u1"}"#.utf8)),
                try await send(to: loopback, "/__records", method: "GET", body: nil),
                try await send(to: loopback, "/__redirect?status=307&to=\(target)", method: "GET", body: nil),
                try await send(to: loopback, "/__redirect?status=307&to=\(target)"),
            ]
            for answer in answers {
                #expect(answer.status == 404, "answer was \(answer.raw)")
                #expect(answer.raw == unknown.raw)
                #expect(answer.reply.token == nil)
            }
            // The vendor routes still work, and only they were recorded.
            let track = EngagementEndpoint.trackEvents.path(projectToken: testProjectToken)
            #expect(try await send(to: loopback, track, authorization: "Token \(testAPIKey)").status == 200)
            #expect(await backend.records().map(\.path) == [track])
        }
    }

    @Test("allowTestRoutesOnAnyInterface serves the test routes on 0.0.0.0")
    func theAllowTestRoutesFlagServesThemOnAnyInterface() async throws {
        let configuration = ReferenceBackend.Configuration(
            host: "0.0.0.0", apiKeys: [testAPIKey], projectToken: testProjectToken, allowTestRoutesOnAnyInterface: true
        )
        try await withBackend(configuration) { backend in
            #expect(backend.testRoutesEnabled)
            let loopback = try #require(URL(string: "http://127.0.0.1:\(backend.port)"))
            let login = try await send(to: loopback, "/app/login", body: Data(#"{"userId":"u1"}"#.utf8))
            #expect(login.status == 200, "answer was \(login.raw)")
            #expect(login.reply.token != nil)
            #expect(try await send(to: loopback, "/__records", method: "GET", body: nil).status == 200)
        }
    }

    // MARK: Size limits before parsing

    @Test("A validly signed bearer token over 8 KiB is refused with 401 token_too_large before it is parsed")
    func anOversizedBearerTokenIsRefusedBeforeParsing() async throws {
        try await withBackend { backend in
            let path = EngagementEndpoint.appInboxFetch.path(projectToken: testProjectToken)
            let limit = ReferenceBackend.maximumAuthorizationHeaderSize
            #expect(limit == 8192)
            // Correctly signed and otherwise valid: only the size check can refuse it.
            let signed = try backend.issueToken(userId: "u1", claims: ["padding": String(repeating: "p", count: limit)])
            expectFailure(
                try await send(backend, path, authorization: "Bearer \(signed)", body: customerBody("u1")),
                status: 401, code: .tokenTooLarge
            )
            // Not base64 at all: refused for its size, not as malformed, so nothing was decoded.
            let garbage = String(repeating: "!", count: limit)
            expectFailure(try await send(backend, path, authorization: "Bearer \(garbage)"), status: 401, code: .tokenTooLarge)
            // The limit is on the whole header, whatever the scheme.
            expectFailure(try await send(backend, path, authorization: "Token \(garbage)"), status: 401, code: .tokenTooLarge)
            // Exactly at the limit the header is read, and the garbage found malformed.
            let atLimit = "Bearer " + String(repeating: "!", count: limit - "Bearer ".utf8.count)
            expectFailure(try await send(backend, path, authorization: atLimit), status: 401, code: .malformedToken)
            // A normal token still works.
            let token = try backend.issueToken(userId: "u1")
            #expect(try await send(backend, path, authorization: "Bearer \(token)", body: customerBody("u1")).status == 200)
        }
    }

    @Test("POST /app/login refuses to mint a token the backend would refuse as too large")
    func loginRefusesToMintAnOversizedToken() async throws {
        try await withBackend { backend in
            let userId = String(repeating: "u", count: ReferenceBackend.maximumAuthorizationHeaderSize)
            expectFailure(try await send(backend, "/app/login", body: #"{"userId":"\#(userId)"}"#), status: 400, code: .invalidRequest)
            expectFailure(try await send(backend, "/app/login", body: #"{"userId":""}"#), status: 400, code: .invalidRequest)
        }
    }

    @Test("A request body over 1 MiB is refused with 413 body_too_large in the JSON error shape")
    func anOversizedBodyIsRefusedWith413() async throws {
        try await withBackend { backend in
            let tooLarge = Data(repeating: UInt8(ascii: " "), count: ReferenceBackend.maximumRequestBodySize + 1)
            let track = EngagementEndpoint.trackEvents.path(projectToken: testProjectToken)
            expectFailure(
                try await send(to: backend.baseURL, track, authorization: "Token \(testAPIKey)", body: tooLarge),
                status: 413, code: .bodyTooLarge
            )
            expectFailure(try await send(to: backend.baseURL, "/app/login", body: tooLarge), status: 413, code: .bodyTooLarge)
            #expect(await backend.records().isEmpty)
            #expect(try await send(backend, track, authorization: "Token \(testAPIKey)").status == 200)
        }
    }

    // MARK: Deeply nested JSON

    @Test("A JWT whose payload is 2,500 nested arrays is refused as malformed_token; 5,000 are refused for their size")
    func aDeeplyNestedTokenIsRefusedWithoutCrashing() async throws {
        try await withBackend { backend in
            let path = EngagementEndpoint.appInboxFetch.path(projectToken: testProjectToken)
            let header = base64URL(#"{"alg":"RS256","typ":"JWT","kid":"rb-key-1"}"#)
            func nested(_ depth: Int) -> String { String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }

            let underLimit = header + "." + base64URL(nested(2_500)) + ".c2ln"
            #expect(underLimit.utf8.count < ReferenceBackend.maximumAuthorizationHeaderSize)
            expectFailure(try await send(backend, path, authorization: "Bearer \(underLimit)"), status: 401, code: .malformedToken)

            // The same nesting in the header.
            let nestedHeader = base64URL(#"{"alg":"RS256","x":"# + nested(2_500) + "}") + "." + base64URL("{}") + ".c2ln"
            expectFailure(try await send(backend, path, authorization: "Bearer \(nestedHeader)"), status: 401, code: .malformedToken)

            let overLimit = header + "." + base64URL(nested(5_000)) + ".c2ln"
            expectFailure(try await send(backend, path, authorization: "Bearer \(overLimit)"), status: 401, code: .tokenTooLarge)

            let token = try backend.issueToken(userId: "u1")
            #expect(try await send(backend, path, authorization: "Bearer \(token)", body: customerBody("u1")).status == 200)
        }
    }

    // MARK: The subject check cannot be skipped

    @Test(
        "A bearer request whose body does not name the customer is refused with 403 customer_id_missing",
        arguments: [
            nil, "", "{}", "[]", "not json", "null", #"{"customer_ids":{}}"#, #"{"customer_ids":"u1"}"#,
            #"{"customer_ids":{"registered":null}}"#, #"{"customer_ids":{"registered":42}}"#,
            #"{"customer_ids":{"registered":""}}"#, #"{"customer_ids":{"registered":["u1"]}}"#,
            #"{"customer_ids":{"cookie":"u1"}}"#,
            // A repeated key could be read as either value: refused rather than guessed.
            #"{"customer_ids":{"registered":"u1","registered":"u2"}}"#,
            #"{"customer_ids":{"registered":"u1"}} trailing"#,
        ] as [String?]
    )
    func aBearerRequestWithoutCustomerIdsRegisteredIsRefused(_ body: String?) async throws {
        let configuration = ReferenceBackend.Configuration(
            apiKeys: [testAPIKey], projectToken: testProjectToken, bearerRequiredEndpoints: [.appInboxFetch, .appInboxMarkAsRead]
        )
        try await withBackend(configuration) { backend in
            let token = try backend.issueToken(userId: "u1")
            for endpoint in [EngagementEndpoint.appInboxFetch, .appInboxMarkAsRead, .trackEvents] {
                let answer = try await send(backend, endpoint.path(projectToken: testProjectToken), authorization: "Bearer \(token)", body: body)
                expectFailure(answer, status: 403, code: .customerIdMissing)
            }
            // The same token naming its customer is accepted.
            let fetch = EngagementEndpoint.appInboxFetch.path(projectToken: testProjectToken)
            #expect(try await send(backend, fetch, authorization: "Bearer \(token)", body: customerBody("u1")).status == 200)
        }
    }

    @Test("A body nested deeper than the body limit cannot hide customer_ids: 403 customer_id_missing")
    func aDeeplyNestedBodyIsRefusedOnABearerEndpoint() async throws {
        try await withBackend { backend in
            let token = try backend.issueToken(userId: "u1")
            let depth = 100_000
            let body = #"{"customer_ids":{"registered":"u1"},"x":"# + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}"
            let answer = try await send(
                backend, EngagementEndpoint.appInboxFetch.path(projectToken: testProjectToken), authorization: "Bearer \(token)", body: body
            )
            expectFailure(answer, status: 403, code: .customerIdMissing)
            // And the login route refuses it as invalid JSON instead of handing it to JSONDecoder.
            let login = #"{"userId":"u1","x":"# + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}"
            expectFailure(try await send(backend, "/app/login", body: login), status: 400, code: .invalidRequest)
        }
    }

    @Test("The new error codes are stable and have their documented statuses")
    func newErrorCodesHaveTheirStatuses() {
        #expect(ReferenceBackend.ErrorCode.tokenTooLarge.rawValue == "token_too_large")
        #expect(ReferenceBackend.ErrorCode.tokenTooLarge.httpStatus == 401)
        #expect(ReferenceBackend.ErrorCode.customerIdMissing.rawValue == "customer_id_missing")
        #expect(ReferenceBackend.ErrorCode.customerIdMissing.httpStatus == 403)
        #expect(ReferenceBackend.ErrorCode.bodyTooLarge.rawValue == "body_too_large")
        #expect(ReferenceBackend.ErrorCode.bodyTooLarge.httpStatus == 413)
        #expect(ReferenceBackend.ErrorCode.subjectMismatch.rawValue == "subject_mismatch")
        #expect(ReferenceBackend.ErrorCode.malformedToken.rawValue == "malformed_token")
    }
}

/// Base64url without padding, as in a JWT.
func base64URL(_ text: String) -> String {
    Data(text.utf8).base64EncodedString()
        .replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}
