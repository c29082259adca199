import Foundation
import Hummingbird
import HummingbirdTesting
import ReferenceBackend
import Testing

@Suite("Reference backend over real HTTP on loopback", .timeLimit(.minutes(3)))
struct ReferenceBackendTests {
    // MARK: API key ("Token") scheme

    @Test("A valid API key is accepted on each of the nine Engagement endpoints", arguments: EngagementEndpoint.allCases)
    func validAPIKeyIsAccepted(on endpoint: EngagementEndpoint) async throws {
        try await withBackend { backend in
            let answer = try await send(backend, endpoint.path(projectToken: testProjectToken), authorization: "Token \(testAPIKey)")
            #expect(answer.status == 200, "answer was \(answer.raw)")
            #expect(answer.reply.success == true)
            #expect(answer.reply.endpoint == endpoint.rawValue)
            #expect(answer.reply.scheme == "Token")
            #expect(answer.raw.contains(#""subject":null"#))
            #expect(answer.contentType?.hasPrefix("application/json") == true)
        }
    }

    @Test("The endpoint paths are exactly SPEC.md's templates")
    func endpointPathsMatchTheSpec() {
        #expect(EngagementEndpoint.allCases.count == 9)
        #expect(EngagementEndpoint.inAppMessages.path(projectToken: "p") == "/webxp/s/p/inappmessages?v=1")
        #expect(EngagementEndpoint.selfCheckNotification.path(projectToken: "p") == "/campaigns/send-self-check-notification?project_id=p")
        #expect(EngagementEndpoint.appInboxMarkAsRead.pathTemplate == "/webxp/projects/<projectToken>/appinbox/markasread")
    }

    @Test("A wrong API key is rejected with 401 invalid_api_key")
    func wrongAPIKeyIsRejected() async throws {
        try await withBackend { backend in
            let answer = try await send(backend, EngagementEndpoint.trackEvents.path(projectToken: testProjectToken), authorization: "Token not-the-key")
            expectFailure(answer, status: 401, code: .invalidAPIKey)
        }
    }

    @Test("A missing header is 401 missing_authorization and a Basic header is 401 unsupported_scheme")
    func missingOrUnsupportedAuthorizationIsRejected() async throws {
        try await withBackend { backend in
            let path = EngagementEndpoint.trackCustomers.path(projectToken: testProjectToken)
            expectFailure(try await send(backend, path), status: 401, code: .missingAuthorization)
            expectFailure(try await send(backend, path, authorization: "Basic dXNlcjpwYXNz"), status: 401, code: .unsupportedScheme)
        }
    }

    @Test("A request for another project token is answered 404 unknown_project")
    func unknownProjectIsRejected() async throws {
        try await withBackend { backend in
            expectFailure(
                try await send(backend, EngagementEndpoint.trackCustomers.path(projectToken: "other"), authorization: "Token \(testAPIKey)"),
                status: 404, code: .unknownProject
            )
            expectFailure(
                try await send(backend, EngagementEndpoint.selfCheckNotification.path(projectToken: "other"), authorization: "Token \(testAPIKey)"),
                status: 404, code: .unknownProject
            )
        }
    }

    @Test("In-app messages without ?v=1 are answered 400 invalid_request")
    func inAppMessagesRequireVersionQuery() async throws {
        try await withBackend { backend in
            let answer = try await send(backend, "/webxp/s/\(testProjectToken)/inappmessages", authorization: "Token \(testAPIKey)")
            expectFailure(answer, status: 400, code: .invalidRequest)
        }
    }

    // MARK: Customer token ("Bearer") scheme

    @Test("A valid login token from POST /app/login is accepted on app inbox fetch")
    func validLoginTokenIsAcceptedOnAppInboxFetch() async throws {
        try await withBackend { backend in
            let token = try await login(backend, userId: "u1", variant: .valid)
            let answer = try await send(
                backend, EngagementEndpoint.appInboxFetch.path(projectToken: testProjectToken),
                authorization: "Bearer \(token)", body: customerBody("u1")
            )
            #expect(answer.status == 200, "answer was \(answer.raw)")
            #expect(answer.reply.scheme == "Bearer")
            #expect(answer.reply.subject == "u1")
            #expect(answer.reply.endpoint == "appInboxFetch")
        }
    }

    @Test(
        "Each bad token variant is rejected with its exact status and error code",
        arguments: [TokenVariant.expired, .missingExp, .wrongAlgorithm, .wrongKey, .otherSubject]
    )
    func badVariantIsRejected(_ variant: TokenVariant) async throws {
        let expected: (status: Int, code: ReferenceBackend.ErrorCode) =
            switch variant {
            case .expired: (401, .tokenExpired)
            case .missingExp: (401, .missingExp)
            case .wrongAlgorithm: (401, .unsupportedAlgorithm)
            case .wrongKey: (401, .invalidSignature)
            case .otherSubject: (403, .subjectMismatch)
            case .valid: (200, .invalidRequest)
            }
        try await withBackend { backend in
            let token = try await login(backend, userId: "u1", variant: variant)
            let answer = try await send(
                backend, EngagementEndpoint.appInboxFetch.path(projectToken: testProjectToken),
                authorization: "Bearer \(token)", body: customerBody("u1")
            )
            expectFailure(answer, status: expected.status, code: expected.code)
        }
    }

    @Test("A bearer value that is not a JWT is rejected with 401 malformed_token")
    func malformedTokenIsRejected() async throws {
        try await withBackend { backend in
            let path = EngagementEndpoint.appInboxFetch.path(projectToken: testProjectToken)
            for value in ["not-a-jwt", "a.b.c", "e30.e30", "Bearer"] {
                expectFailure(try await send(backend, path, authorization: "Bearer \(value)"), status: 401, code: .malformedToken)
            }
        }
    }

    @Test("Login answers expiresAt as unix seconds, or null for missingExp")
    func loginAnswersExpiresAt() async throws {
        try await withBackend { backend in
            let valid = try await send(backend, "/app/login", body: #"{"userId":"u1","variant":"valid","lifetimeSeconds":120}"#)
            let expiresAt = try #require(valid.reply.expiresAt)
            #expect(abs(Double(expiresAt) - Date().timeIntervalSince1970 - 120) < 5)
            let missing = try await send(backend, "/app/login", body: #"{"userId":"u1","variant":"missingExp"}"#)
            #expect(missing.status == 200)
            #expect(missing.raw.contains(#""expiresAt":null"#))
            expectFailure(try await send(backend, "/app/login", body: #"{"variant":"valid"}"#), status: 400, code: .invalidRequest)
            expectFailure(try await send(backend, "/app/login", body: #"{"userId":"u1","variant":"bogus"}"#), status: 400, code: .invalidRequest)
        }
    }

    @Test("When audience and issuer are configured, tokens must carry them")
    func audienceAndIssuerAreEnforced() async throws {
        let configuration = ReferenceBackend.Configuration(
            apiKeys: [testAPIKey], projectToken: testProjectToken, audience: "engagement", issuer: "app-server"
        )
        try await withBackend(configuration) { backend in
            let path = EngagementEndpoint.appInboxFetch.path(projectToken: testProjectToken)
            let good = try backend.issueToken(userId: "u1")
            #expect(try await send(backend, path, authorization: "Bearer \(good)", body: customerBody("u1")).status == 200)
            let wrongAudience = try backend.issueToken(userId: "u1", audience: "braze")
            expectFailure(try await send(backend, path, authorization: "Bearer \(wrongAudience)"), status: 401, code: .invalidAudience)
            let wrongIssuer = try backend.issueToken(userId: "u1", issuer: "someone-else")
            expectFailure(try await send(backend, path, authorization: "Bearer \(wrongIssuer)"), status: 401, code: .invalidIssuer)
        }
    }

    @Test("A token signed by another backend instance's key is rejected with invalid_signature")
    func tokenFromAnotherBackendIsRejected() async throws {
        let foreign = try await withBackend { try $0.issueToken(userId: "u1") }
        try await withBackend { backend in
            let answer = try await send(backend, EngagementEndpoint.appInboxFetch.path(projectToken: testProjectToken), authorization: "Bearer \(foreign)")
            expectFailure(answer, status: 401, code: .invalidSignature)
        }
    }

    // MARK: Key rotation

    @Test("Key rotation keeps old tokens valid until their key is dropped after three rotations")
    func keyRotationDropsTheOldestOfThreeKeys() async throws {
        try await withBackend { backend in
            let path = EngagementEndpoint.appInboxMarkAsRead.path(projectToken: testProjectToken)
            let firstKey = try #require(backend.trustedKeyIDs.last)
            let oldToken = try backend.issueToken(userId: "u1")

            for rotation in 1...2 {
                try await backend.rotateSigningKey()
                let answer = try await send(backend, path, authorization: "Bearer \(oldToken)", body: customerBody("u1"))
                #expect(answer.status == 200, "after rotation \(rotation): \(answer.raw)")
            }
            #expect(backend.trustedKeyIDs.count == 3)
            #expect(backend.trustedKeyIDs.first == firstKey)

            let newestKey = try await backend.rotateSigningKey()
            #expect(backend.trustedKeyIDs.count == 3)
            #expect(!backend.trustedKeyIDs.contains(firstKey))
            #expect(backend.trustedKeyIDs.last == newestKey)

            expectFailure(try await send(backend, path, authorization: "Bearer \(oldToken)", body: customerBody("u1")), status: 401, code: .invalidSignature)
            let newToken = try backend.issueToken(userId: "u1")
            #expect(try await send(backend, path, authorization: "Bearer \(newToken)", body: customerBody("u1")).status == 200)
        }
    }

    // MARK: Bearer-required endpoints

    @Test("An endpoint in bearerRequiredEndpoints refuses a valid Token with 403 and accepts Bearer")
    func bearerRequiredEndpointRefusesToken() async throws {
        let configuration = ReferenceBackend.Configuration(
            apiKeys: [testAPIKey], projectToken: testProjectToken, bearerRequiredEndpoints: [.appInboxFetch, .appInboxMarkAsRead]
        )
        try await withBackend(configuration) { backend in
            let fetch = EngagementEndpoint.appInboxFetch.path(projectToken: testProjectToken)
            expectFailure(try await send(backend, fetch, authorization: "Token \(testAPIKey)"), status: 403, code: .bearerRequired)
            let token = try backend.issueToken(userId: "u1")
            #expect(try await send(backend, fetch, authorization: "Bearer \(token)", body: customerBody("u1")).status == 200)
            // Endpoints not listed still take the API key.
            let track = EngagementEndpoint.trackEvents.path(projectToken: testProjectToken)
            #expect(try await send(backend, track, authorization: "Token \(testAPIKey)").status == 200)
        }
    }

    // MARK: Request record

    @Test("Records capture method, path, query, the full Authorization header, header names and body")
    func recordsCaptureTheAuthorizationHeader() async throws {
        try await withBackend { backend in
            let token = try backend.issueToken(userId: "u1")
            _ = try await send(backend, EngagementEndpoint.inAppMessages.path(projectToken: testProjectToken), authorization: "Token \(testAPIKey)")
            _ = try await send(
                backend, EngagementEndpoint.appInboxFetch.path(projectToken: testProjectToken),
                authorization: "Bearer \(token)", body: customerBody("u1")
            )
            _ = try await send(backend, EngagementEndpoint.trackCustomers.path(projectToken: testProjectToken), authorization: nil)

            let records = await backend.records()
            try #require(records.count == 3)
            #expect(records[0].method == "POST")
            #expect(records[0].path == "/webxp/s/\(testProjectToken)/inappmessages")
            #expect(records[0].query == "v=1")
            #expect(records[0].authorization == "Token \(testAPIKey)")
            #expect(records[1].authorization == "Bearer \(token)")
            #expect(records[1].body == customerBody("u1"))
            #expect(records[1].headerNames.contains("authorization"))
            #expect(records[1].headerNames.contains("content-type"))
            #expect(records[2].authorization == nil)
            #expect(!records[2].headerNames.contains("authorization"))

            let served = try await send(backend, "/__records", method: "GET", body: nil)
            #expect(served.status == 200)
            let decoded = try JSONDecoder().decode([RecordedRequest].self, from: Data(served.raw.utf8))
            #expect(decoded == records)
            #expect(served.raw.contains(#""authorization":null"#))

            await backend.clearRecords()
            #expect(await backend.records().isEmpty)
        }
    }

    // MARK: Rover-style ID token endpoint

    @Test("GET /rover/ticketing accepts a valid ID token and answers its subject and custom claims")
    func roverTicketingAcceptsAValidToken() async throws {
        try await withBackend { backend in
            let token = try await login(backend, userId: "rover-user", variant: .valid, extra: #","claims":{"ticketmasterID":"tm-42"}"#)
            let answer = try await send(backend, "/rover/ticketing", method: "GET", authorization: "Bearer \(token)", body: nil)
            #expect(answer.status == 200, "answer was \(answer.raw)")
            #expect(answer.reply.success == true)
            #expect(answer.reply.subject == "rover-user")
            #expect(answer.reply.claims == ["ticketmasterID": "tm-42"])
            #expect(await backend.records().last?.path == "/rover/ticketing")
        }
    }

    @Test("GET /rover/ticketing rejects an expired ID token with 401 token_expired")
    func roverTicketingRejectsAnExpiredToken() async throws {
        try await withBackend { backend in
            let token = try backend.issueToken(userId: "rover-user", variant: .expired)
            let answer = try await send(backend, "/rover/ticketing", method: "GET", authorization: "Bearer \(token)", body: nil)
            expectFailure(answer, status: 401, code: .tokenExpired)
            expectFailure(try await send(backend, "/rover/ticketing", method: "GET", body: nil), status: 401, code: .missingAuthorization)
        }
    }

    // MARK: Lifecycle

    @Test("Backends started on port 0 listen on distinct real ports at the same time")
    func backendsOnPortZeroGetDistinctPorts() async throws {
        try await withBackend { first in
            let second = try await ReferenceBackend.start(
                ReferenceBackend.Configuration(apiKeys: [testAPIKey], projectToken: testProjectToken)
            )
            #expect(first.port != 0)
            #expect(first.port != second.port)
            #expect(first.baseURL.absoluteString == "http://127.0.0.1:\(first.port)")
            let path = EngagementEndpoint.trackCustomers.path(projectToken: testProjectToken)
            let firstAnswer = try await send(first, path, authorization: "Token \(testAPIKey)")
            let secondAnswer = try await send(second, path, authorization: "Token \(testAPIKey)")
            await second.stop()
            #expect(firstAnswer.status == 200)
            #expect(secondAnswer.status == 200)
        }
    }

    @Test("A raw HTTP/1.1 client (HummingbirdTesting.TestClient) gets the JSON error shape")
    func rawClientGetsJSONErrors() async throws {
        try await withBackend { backend in
            let path = EngagementEndpoint.trackCustomers.path(projectToken: testProjectToken)
            let response = try await TestClient.withClient(host: "127.0.0.1", port: backend.port) { client in
                try await client.post(path, headers: [.authorization: "Token wrong"], body: ByteBuffer(string: "{}"))
            }
            #expect(response.status == .unauthorized)
            #expect(response.headers[.contentType] == "application/json")
            let body = try #require(response.body.map { String(buffer: $0) })
            #expect(body == #"{"error":"invalid_api_key","message":"The API key is not valid for this project.","success":false}"#)
        }
    }
}
