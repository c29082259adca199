import Crypto
import Foundation
import SDKAuthorization
import SDKAuthorizationTokenExchange
import Synchronization

/// The app's server in the token-exchange mode: it signs the payload the SDK hands over with the
/// secret it shares with the platform (HS256), adding the user's claims and `iat`/`exp`. Here it
/// runs in process; a real app keeps the secret on its server.
public struct PayloadSigningServer: Sendable {
    public let secret: String
    public var algorithm: String = "HS256"
    public var phone: String?
    /// Whether `iat` goes as a string of digits (`"1700000000"`), as the vendor's Ruby sample sends it.
    public var issuedAtAsDigits: Bool

    public init(secret: String, algorithm: String = "HS256", phone: String? = nil, issuedAtAsDigits: Bool = false) {
        self.secret = secret
        self.algorithm = algorithm
        self.phone = phone
        self.issuedAtAsDigits = issuedAtAsDigits
    }

    /// Signs `payload` for `identifier`.
    public func sign(_ payload: SigningPayload, identifier: String) -> String {
        var claims: [String: Any] = [:]
        for (key, value) in payload.claims { if case .string(let text) = value { claims[key] = text } }
        let now = Int(Date().timeIntervalSince1970)
        claims["identifier"] = identifier
        claims["name"] = "Sample User"
        claims["iat"] = issuedAtAsDigits ? String(now) as Any : now as Any
        claims["exp"] = now + 300
        if let phone { claims["phone"] = phone }
        func segment(_ object: [String: Any]) -> String {
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
            return Self.base64URL(data)
        }
        let signingInput = segment(["alg": algorithm, "typ": "JWT"]) + "." + segment(claims)
        let key = SymmetricKey(data: Data(secret.utf8))
        let signature: Data
        switch algorithm {
        case "HS384": signature = Data(HMAC<SHA384>.authenticationCode(for: Data(signingInput.utf8), using: key))
        case "none": return signingInput + "."
        default: signature = Data(HMAC<SHA256>.authenticationCode(for: Data(signingInput.utf8), using: key))
        }
        return signingInput + "." + Self.base64URL(signature)
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}

/// Payload-signing and token-exchange mode (CCAI style): the app signs a payload, the framework
/// exchanges it for an end-user auth token and sends `Authorization: Bearer <auth token>` to the
/// platform's API until the token expires.
public enum TokenExchangeModeSample {
    /// The shared secret of an embedded backend.
    public static let defaultExchangeSecret = "sample-exchange-secret"

    public static func run(_ environment: SampleEnvironment, exchangeSecret: String = defaultExchangeSecret) async throws -> [ReportRow] {
        var rows: [ReportRow] = []
        let exchangeURL = environment.baseURL.appendingPathComponent("ccai/exchange")
        let chatsURL = environment.baseURL.appendingPathComponent("ccai/chats")

        func client(_ server: PayloadSigningServer, signings: SigningCounter) throws -> (AuthorizedHTTPClient, ObservedTransport, TokenExchangeProvider) {
            let exchange = try TokenExchangeProvider(
                exchangeURL: exchangeURL,
                signer: .async { payload in
                    signings.increment()
                    return server.sign(payload, identifier: "user-7")
                },
                defaultClaims: ["push_token": .string("sample-push-token")]
            )
            var policy = AuthorizationPolicy()
            policy.add(try AuthorizationRule(origin: environment.baseURL, path: "/ccai/chats", method: "GET", scheme: .bearer))
            let transport = ObservedTransport()
            return (AuthorizedHTTPClient(authorizer: try RequestAuthorizer(policy: policy, providers: [.bearer: exchange]), transport: transport), transport, exchange)
        }
        func row(_ note: String, _ outcome: Result<ServerResponse, RequestError>, header: String?, expected: Bool) {
            rows.append(ReportRow(mode: "token exchange (\(note))", endpoint: "GET /ccai/chats", header: header.map(redactedHeader) ?? "(not sent)",
                                  verdict: verdict(outcome), asExpected: expected))
        }

        // Sign -> exchange -> authorized call; a hundred concurrent calls share the one signing.
        let signings = SigningCounter()
        let (good, transport, exchange) = try client(PayloadSigningServer(secret: exchangeSecret), signings: signings)
        let statuses = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<100 { group.addTask { (try? await good.send(OutgoingRequest(method: "GET", url: chatsURL)).statusCode) ?? 0 } }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        let first = await Result { () async throws(RequestError) in try await good.send(OutgoingRequest(method: "GET", url: chatsURL)) }
        row("100 calls, \(signings.count) signing", first, header: transport.lastAuthorizationHeader,
            expected: statuses.allSatisfy { $0 == 200 } && signings.count == 1 && (try? first.get()) != nil)

        // The auth token expires at the platform (an embedded backend expires it on request): the call
        // gets 401, the framework signs and exchanges once more, and the retry is accepted.
        if let backend = environment.embedded {
            backend.expireExchangedTokens()
            let renewed = await Result { () async throws(RequestError) in try await good.send(OutgoingRequest(method: "GET", url: chatsURL)) }
            row("expired, signed again once", renewed, header: transport.lastAuthorizationHeader, expected: (try? renewed.get()) != nil && signings.count == 2)
        }

        // Logout forgets the auth token: the next call signs anew.
        exchange.clearUserData()
        let afterLogout = await Result { () async throws(RequestError) in try await good.send(OutgoingRequest(method: "GET", url: chatsURL)) }
        row("after clearUserData", afterLogout, header: transport.lastAuthorizationHeader,
            expected: (try? afterLogout.get()) != nil && signings.count == (environment.embedded == nil ? 2 : 3))

        // Payloads as the vendor's own samples sign them: `phone: ""` for a user without one, and (the
        // Ruby sample) `iat` as a string of digits. Both are accepted, by the framework and the platform.
        for (note, server) in [
            (#"vendor sample, phone """#, PayloadSigningServer(secret: exchangeSecret, phone: "")),
            ("vendor Ruby sample, iat as digits", PayloadSigningServer(secret: exchangeSecret, issuedAtAsDigits: true)),
        ] {
            let (vendor, vendorTransport, _) = try client(server, signings: SigningCounter())
            let outcome = await Result { () async throws(RequestError) in try await vendor.send(OutgoingRequest(method: "GET", url: chatsURL)) }
            row(note, outcome, header: vendorTransport.lastAuthorizationHeader, expected: (try? outcome.get())?.statusCode == 200)
        }

        // Payloads the platform must refuse, each with its own error.
        for (note, server, code) in [
            ("alg none", PayloadSigningServer(secret: exchangeSecret, algorithm: "none"), "unsigned_payload"),
            ("wrong secret", PayloadSigningServer(secret: "not-the-shared-secret"), "invalid_signature"),
        ] {
            let (bad, badTransport, _) = try client(server, signings: SigningCounter())
            let outcome = await Result { () async throws(RequestError) in try await bad.send(OutgoingRequest(method: "GET", url: chatsURL)) }
            let refused: Bool = if case .failure(let error) = outcome { error.code == .exchangeFailed && serverErrorCode(error.body) == code } else { false }
            row(note, outcome, header: badTransport.lastAuthorizationHeader, expected: refused && badTransport.lastAuthorizationHeader == nil)
        }

        // A phone number that is not E.164 is the platform's to judge (the vendor recommends E.164):
        // the framework exchanges it with one warning, and this platform refuses it.
        let (phone, phoneTransport, _) = try client(PayloadSigningServer(secret: exchangeSecret, phone: "415-555-0100"), signings: SigningCounter())
        let outcome = await Result { () async throws(RequestError) in try await phone.send(OutgoingRequest(method: "GET", url: chatsURL)) }
        let judged: Bool = if case .failure(let error) = outcome { error.code == .exchangeFailed && serverErrorCode(error.body) == "invalid_phone" } else { false }
        row("phone not E.164, judged by the platform", outcome, header: phoneTransport.lastAuthorizationHeader, expected: judged)
        return rows
    }
}

/// Counts signing callbacks.
public final class SigningCounter: Sendable {
    private let value = Mutex(0)
    public init() {}
    public func increment() { value.withLock { $0 += 1 } }
    public var count: Int { value.withLock { $0 } }
}
