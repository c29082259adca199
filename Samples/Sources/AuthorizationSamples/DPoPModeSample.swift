import Crypto
import DPoPMode
import Foundation
import SDKAuthorization
import SDKAuthorizationEngagement
import Synchronization

/// Proof-of-possession tokens (RFC 9449 DPoP): a mode written outside the framework, in a package
/// of its own (`Samples/DPoPMode`) that uses only the framework's public API, as an integrator's
/// would. The sample app chooses it by name in its configuration file (`dpop-authorization.json`,
/// with the mode's own keys) and registers it at build time (`sdkauth-providers.json`, read by the
/// RegisterAuthorizationProviders plugin) or in code with the app's own key. The reference backend
/// issues DPoP-bound tokens and checks every proof: its signature and key, method, URL, time, token
/// hash, one-time use and the server's nonce.
public enum DPoPModeSample {
    /// The configuration file the sample app ships, beside this source. Its URLs name the reference
    /// backend at the address `reference-backend --port 8080` listens on; ``run(_:)`` points them
    /// at the backend it runs against.
    public static let configurationFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("dpop-authorization.json")
    static let fileBaseURL = "http://127.0.0.1:8080"
    static let resourcePath = "/dpop/resource"
    static let tokenPath = "/dpop/token"

    public static func run(_ environment: SampleEnvironment) async throws -> [ReportRow] {
        var rows: [ReportRow] = []
        let resourceURL = environment.baseURL.appendingPathComponent("dpop/resource")
        func row(_ note: String, _ outcome: Result<ServerResponse, RequestError>, header: String?, expected: Bool) {
            rows.append(ReportRow(mode: "DPoP, outside mode (\(note))", endpoint: "GET \(resourcePath)", header: header.map(redactedHeader) ?? "(not sent)",
                                  verdict: verdict(outcome), asExpected: expected))
        }

        // Registered at build time (sdkauth-providers.json: the mode's init() makes a fresh P-256 key),
        // chosen by name in the file: 20 concurrent calls share one token, fetched after the server
        // asked for its nonce.
        let registry = ProviderRegistry()
        registry.registerManifestProviders()
        let transport = SentRequests()
        let client = try makeClient(configuration(environment, registry: registry), registry: registry, transport: transport)
        let statuses = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<20 { group.addTask { (try? await client.send(OutgoingRequest(method: "GET", url: resourceURL)).statusCode) ?? 0 } }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        let tokenRequests = transport.count(path: tokenPath)
        rows.append(ReportRow(mode: "DPoP, outside mode (file, build-time registration, 20 calls)", endpoint: "GET \(resourcePath)",
                              header: redactedHeader(transport.last(path: resourcePath)?.value(forHeader: "Authorization")),
                              verdict: "\(statuses.filter { $0 == 200 }.count)x 200 accepted, \(tokenRequests) token requests",
                              asExpected: statuses.allSatisfy { $0 == 200 } && tokenRequests == (environment.embedded == nil ? tokenRequests : 2)
                                  && transport.count(path: resourcePath) == 20))

        // The app's own key (a key it keeps in its keychain or Secure Enclave), registered in code: the
        // server binds the token to that key's thumbprint.
        let signer = P256DPoPSigner()
        let appRegistry = ProviderRegistry()
        appRegistry.register(DPoPAuthorizationMode(signer: signer))
        let appTransport = SentRequests()
        let appClient = try makeClient(configuration(environment, registry: appRegistry), registry: appRegistry, transport: appTransport)
        let bound = await Result { () async throws(RequestError) in try await appClient.send(OutgoingRequest(method: "GET", url: resourceURL)) }
        let jkt = (try? bound.get()).flatMap { Self.member("jkt", of: $0.body) }
        row("the app's key, registered in code", bound, header: appTransport.last(path: resourcePath)?.value(forHeader: "Authorization"),
            expected: jkt != nil && jkt == thumbprint(signer.publicKey))

        if let backend = environment.embedded {
            // The server rotates its nonce: the next call is answered use_dpop_nonce and sent once more
            // with a new proof carrying the new nonce; the token stays.
            backend.rotateDPoPNonce()
            let before = (appTransport.count(path: resourcePath), appTransport.count(path: tokenPath))
            let rotated = await Result { () async throws(RequestError) in try await appClient.send(OutgoingRequest(method: "GET", url: resourceURL)) }
            row("nonce rotated, sent again once", rotated, header: appTransport.last(path: resourcePath)?.value(forHeader: "Authorization"),
                expected: (try? rotated.get())?.statusCode == 200 && appTransport.count(path: resourcePath) - before.0 == 2
                    && appTransport.count(path: tokenPath) == before.1)

            // The token expires at the server: invalid_token, one new token, the retry is accepted.
            backend.expireDPoPTokens()
            let tokensBefore = appTransport.count(path: tokenPath)
            let renewed = await Result { () async throws(RequestError) in try await appClient.send(OutgoingRequest(method: "GET", url: resourceURL)) }
            row("token expired, one new token", renewed, header: appTransport.last(path: resourcePath)?.value(forHeader: "Authorization"),
                expected: (try? renewed.get())?.statusCode == 200 && appTransport.count(path: tokenPath) == tokensBefore + 1)
        }

        // What an attacker who copied a request can do with it: nothing. The same request sent again
        // (its proof already used), and the token alone as a bearer token, are both refused.
        if let captured = appTransport.last(path: resourcePath) {
            let raw = URLSessionHTTPTransport(timeout: 15)
            let replayed = try await raw.send(captured)
            rows.append(ReportRow(mode: "DPoP, outside mode (a copied request sent again)", endpoint: "GET \(resourcePath)",
                                  header: redactedHeader(captured.value(forHeader: "Authorization")),
                                  verdict: "\(replayed.statusCode) \(serverErrorCode(replayed.body))",
                                  asExpected: replayed.statusCode == 401 && serverErrorCode(replayed.body) == "invalid_dpop_proof"))
            var stolen = OutgoingRequest(method: "GET", url: resourceURL)
            let token = captured.value(forHeader: "Authorization").map { String($0.dropFirst("DPoP ".count)) } ?? ""
            stolen.setHeader("Authorization", "Bearer \(token)")
            let asBearer = try await raw.send(stolen)
            rows.append(ReportRow(mode: "DPoP, outside mode (the token alone, as Bearer)", endpoint: "GET \(resourcePath)",
                                  header: redactedHeader(stolen.value(forHeader: "Authorization")),
                                  verdict: "\(asBearer.statusCode) \(serverErrorCode(asBearer.body))",
                                  asExpected: asBearer.statusCode == 401 && serverErrorCode(asBearer.body) == "invalid_token"))
        }

        // A misspelt key of the mode in the file: refused when the file is read, with the key it means.
        var message = "read (unexpected)"
        do {
            _ = try configuration(environment, registry: registry) { $0.replacingOccurrences(of: "\"dpopTokenURL\"", with: "\"dpopTokenUrl\"") }
        } catch let error as ConfigurationError {
            message = error.message
        }
        rows.append(ReportRow(mode: "DPoP, outside mode (misspelt key)", endpoint: "dpop-authorization.json", header: "-", verdict: message,
                              asExpected: message.contains("'dpopTokenUrl': did you mean 'dpopTokenURL'?")))
        return rows
    }

    /// The client of the sample app: its configuration, and a policy that sends the mode's
    /// credential to the protected resource only.
    static func makeClient(_ configuration: AuthorizationConfiguration, registry: ProviderRegistry, transport: SentRequests) throws -> AuthorizedHTTPClient {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(origin: configuration.baseURL, path: resourcePath, scheme: .bearer))
        return try AuthorizedHTTPClient(configuration: configuration, policy: policy, registry: registry, transport: transport)
    }

    /// The configuration file read as the app reads its own, after its URLs are pointed at
    /// `environment`'s backend (and `edit` applied): written to a temporary file first.
    static func configuration(_ environment: SampleEnvironment, registry: ProviderRegistry,
                              edit: (String) -> String = { $0 }) throws -> AuthorizationConfiguration {
        let base = environment.baseURL.absoluteString.hasSuffix("/") ? String(environment.baseURL.absoluteString.dropLast()) : environment.baseURL.absoluteString
        let text = edit(try String(contentsOf: configurationFile, encoding: .utf8).replacingOccurrences(of: fileBaseURL, with: base))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dpop-sample-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("dpop-authorization.json")
        try Data(text.utf8).write(to: file)
        return try AuthorizationConfiguration(contentsOf: file, registry: registry)
    }

    /// The RFC 7638 thumbprint of a P-256 key, as the server binds a token to it.
    static func thumbprint(_ key: P256.Signing.PublicKey) -> String {
        func encode(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        let members = #"{"crv":"P-256","kty":"EC","x":"\#(encode(key.rawRepresentation.prefix(32)))","y":"\#(encode(key.rawRepresentation.suffix(32)))"}"#
        return encode(Data(SHA256.hash(data: Data(members.utf8))))
    }

    /// A string member of a JSON object body.
    static func member(_ name: String, of body: Data) -> String? {
        (try? JSONSerialization.jsonObject(with: body) as? [String: Any])?[name] as? String
    }
}

/// A transport that sends through ``URLSessionHTTPTransport`` and keeps every request it sent, so
/// the sample can count token requests and show what went over the wire.
final class SentRequests: HTTPTransport, Sendable {
    private let wrapped = URLSessionHTTPTransport(timeout: 15)
    private let sent = Mutex<[OutgoingRequest]>([])

    func send(_ request: OutgoingRequest) async throws -> ServerResponse {
        sent.withLock { $0.append(request) }
        return try await wrapped.send(request)
    }

    func count(path: String) -> Int { sent.withLock { $0.filter { $0.url.path == path }.count } }
    func last(path: String) -> OutgoingRequest? { sent.withLock { $0.last { $0.url.path == path } } }
}
