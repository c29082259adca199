import Foundation
import ReferenceBackend
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

let testAPIKey = "test-api-key"
let testProjectToken = "test-project-token"

/// Starts a backend on a free loopback port, runs `body`, and always stops the backend.
func withBackend<T>(
    _ configuration: ReferenceBackend.Configuration = ReferenceBackend.Configuration(apiKeys: [testAPIKey], projectToken: testProjectToken),
    _ body: (ReferenceBackend) async throws -> T
) async throws -> T {
    let backend = try await ReferenceBackend.start(configuration)
    do {
        let result = try await body(backend)
        await backend.stop()
        return result
    } catch {
        await backend.stop()
        throw error
    }
}

/// Every field any backend answer may have; absent fields are nil.
struct Reply: Decodable {
    var success: Bool?
    var error: String?
    var message: String?
    var endpoint: String?
    var scheme: String?
    var subject: String?
    var claims: [String: String]?
    var token: String?
    var expiresAt: Int?
}

struct HTTPAnswer {
    var status: Int
    var raw: String
    var reply: Reply
    var contentType: String?
}

/// Sends a real HTTP request over loopback with URLSession.
func send(
    _ backend: ReferenceBackend,
    _ pathAndQuery: String,
    method: String = "POST",
    authorization: String? = nil,
    body: String? = "{}"
) async throws -> HTTPAnswer {
    try await send(to: backend.baseURL, pathAndQuery, method: method, authorization: authorization, body: body.map { Data($0.utf8) })
}

/// Sends a real HTTP request with URLSession to `baseURL` + `pathAndQuery`.
func send(
    to baseURL: URL,
    _ pathAndQuery: String,
    method: String = "POST",
    authorization: String? = nil,
    body: Data? = Data("{}".utf8)
) async throws -> HTTPAnswer {
    let url = try #require(URL(string: baseURL.absoluteString + pathAndQuery))
    var request = URLRequest(url: url)
    request.httpMethod = method
    if let authorization { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
    if let body, method != "GET" {
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = body
    }
    let (data, response) = try await URLSession.shared.data(for: request)
    let http = try #require(response as? HTTPURLResponse)
    let raw = String(decoding: data, as: UTF8.self)
    let reply = (try? JSONDecoder().decode(Reply.self, from: data)) ?? Reply()
    return HTTPAnswer(
        status: http.statusCode,
        raw: raw,
        reply: reply,
        contentType: http.value(forHTTPHeaderField: "Content-Type")
    )
}

/// Calls the app-login role over HTTP and returns the minted token.
func login(_ backend: ReferenceBackend, userId: String, variant: TokenVariant, extra: String = "") async throws -> String {
    let answer = try await send(backend, "/app/login", body: #"{"userId":"\#(userId)","variant":"\#(variant.rawValue)"\#(extra)}"#)
    #expect(answer.status == 200, "login answered \(answer.raw)")
    return try #require(answer.reply.token)
}

/// A JSON body naming the registered customer, as the Engagement SDK sends it.
func customerBody(_ registered: String) -> String {
    #"{"customer_ids":{"registered":"\#(registered)"}}"#
}

/// Expects the backend's error shape with this status and code.
func expectFailure(_ answer: HTTPAnswer, status: Int, code: ReferenceBackend.ErrorCode, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(answer.status == status, "answer was \(answer.raw)", sourceLocation: sourceLocation)
    #expect(answer.reply.success == false, sourceLocation: sourceLocation)
    #expect(answer.reply.error == code.rawValue, "answer was \(answer.raw)", sourceLocation: sourceLocation)
    #expect(answer.reply.message?.isEmpty == false, sourceLocation: sourceLocation)
    #expect(code.httpStatus == status, sourceLocation: sourceLocation)
}
