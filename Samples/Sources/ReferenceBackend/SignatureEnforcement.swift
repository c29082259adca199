import Crypto
import CryptoExtras
import Foundation
import Hummingbird
import JWTKit
import Synchronization

// The Braze-style SDK signature role (see "SDK signatures (Braze style)" in ReferenceBackend's DocC):
//   POST /braze/apps/<appId>/data   X-Braze-Auth-Signature: <JWT>, {"user_id", "request_id", "events"}
//        -> 201 accepted, 201 + auth_error (Optional), 401 auth_error (Required)
//   POST /app/braze-signature       (test route) the app server mints a signature
//   PUT  /__braze/apps/<appId>/enforcement  (test route) switches an app's enforcement

extension ReferenceBackend {
    // MARK: Configuration types

    /// How an app of the signature role treats SDK signatures, as Braze's dashboard setting does.
    public enum SignatureEnforcement: String, CaseIterable, Sendable, Codable {
        /// No signature is looked at; every valid request is accepted.
        case disabled
        /// Signatures of identified users are verified and failures reported (in the answer's
        /// `auth_error` with `"optional": true` and in ``ReferenceBackend/signatureErrorReport(appId:)``),
        /// but the request is accepted.
        case optional
        /// Signatures of identified users are verified and a request whose signature fails is
        /// refused with `401` and an `auth_error`.
        case required
    }

    /// An app of the signature role: `POST /braze/apps/<id>/data`.
    public struct SignatureApp: Sendable, Equatable {
        /// The app identifier in the path: 1...64 letters, digits, `-` or `_`; unique.
        public var id: String
        /// How signatures are enforced when the backend starts. Default ``SignatureEnforcement/disabled``,
        /// Braze's own default; change it at runtime with ``ReferenceBackend/setSignatureEnforcement(_:appId:)``.
        public var enforcement: SignatureEnforcement
        /// The app's SDK API key. When set, a signature's `iss` claim, if present, must equal it
        /// (else error 23). When `nil`, `iss` is not checked. Not empty.
        public var apiKey: String?
        /// The RSA public keys (PEM, `-----BEGIN PUBLIC KEY-----`, at least 2048 bits) that verify
        /// the app's signatures: at most ``ReferenceBackend/maximumSignaturePublicKeys``. An empty
        /// list is allowed (every signed request then fails with 25 PUBLIC_KEY_ERROR).
        ///
        /// `nil` (the default) means the app server's keys: the backend's own trusted signing keys,
        /// so signatures from ``ReferenceBackend/issueSignature(userId:variant:lifetime:audience:issuer:)``
        /// and `POST /app/braze-signature` verify, and ``ReferenceBackend/rotateSigningKey()``
        /// keeps at most three of them.
        public var publicKeysPEM: [String]?

        /// Creates an app.
        public init(id: String, enforcement: SignatureEnforcement = .disabled, apiKey: String? = nil, publicKeysPEM: [String]? = nil) {
            self.id = id
            self.enforcement = enforcement
            self.apiKey = apiKey
            self.publicKeysPEM = publicKeysPEM
        }
    }

    /// The numeric `error_code` of an `auth_error`, as Braze reports SDK authentication failures.
    ///
    /// The backend checks a signature in this order and reports the first failure:
    /// 26, 20, 24, 25, 27, 10, 22, 23, 21, 28.
    public enum SignatureErrorCode: Int, CaseIterable, Sendable, Codable {
        /// 10 EXPIRATION_REQUIRED: the payload has no numeric `exp` claim.
        case expirationRequired = 10
        /// 20 DECODING_ERROR: not three base64url parts with a JSON object header and payload
        /// (nesting at most ``ReferenceBackend/maximumTokenJSONDepth`` levels, no repeated keys), or
        /// longer than ``ReferenceBackend/maximumAuthorizationHeaderSize`` bytes (refused unread).
        case decodingError = 20
        /// 21 SUBJECT_MISMATCH: `sub` differs from the body's `user_id`.
        case subjectMismatch = 21
        /// 22 EXPIRED: `exp` is not after the backend's ``Configuration/now``.
        case expired = 22
        /// 23 INVALID_PAYLOAD: `sub` is missing or not a string, `aud` is present and not `braze`
        /// (a string, or an array of strings containing it), or `iss` is present and not the app's
        /// ``SignatureApp/apiKey`` when one is configured.
        case invalidPayload = 23
        /// 24 INCORRECT_ALGORITHM: the header's `alg` is not `RS256`.
        case incorrectAlgorithm = 24
        /// 25 PUBLIC_KEY_ERROR: the app has no public key.
        case publicKeyError = 25
        /// 26 MISSING_TOKEN: no `X-Braze-Auth-Signature` header, or an empty one.
        case missingToken = 26
        /// 27 NO_MATCHING_PUBLIC_KEYS: none of the app's public keys verifies the RS256 signature.
        case noMatchingPublicKeys = 27
        /// 28 PAYLOAD_USER_ID_MISMATCH: an event's `user_id` differs from the body's `user_id`.
        case payloadUserIdMismatch = 28

        /// Braze's name for the code, e.g. `EXPIRED`.
        public var name: String {
            switch self {
            case .expirationRequired: "EXPIRATION_REQUIRED"
            case .decodingError: "DECODING_ERROR"
            case .subjectMismatch: "SUBJECT_MISMATCH"
            case .expired: "EXPIRED"
            case .invalidPayload: "INVALID_PAYLOAD"
            case .incorrectAlgorithm: "INCORRECT_ALGORITHM"
            case .publicKeyError: "PUBLIC_KEY_ERROR"
            case .missingToken: "MISSING_TOKEN"
            case .noMatchingPublicKeys: "NO_MATCHING_PUBLIC_KEYS"
            case .payloadUserIdMismatch: "PAYLOAD_USER_ID_MISMATCH"
            }
        }
    }

    /// Thrown by ``ReferenceBackend/setSignatureEnforcement(_:appId:)`` for an app that is not in
    /// ``Configuration/signatureApps``.
    public struct UnknownSignatureAppError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The app identifier asked for.
        public var appId: String

        /// Creates the error for `appId`.
        public init(appId: String) {
            self.appId = appId
        }

        /// Names the app (at most 64 characters of it).
        public var description: String {
            "No signature app with id \(ReferenceBackend.shown(appId))."
        }
    }

    /// An RSA-2048 key pair of an app server other than the backend's own, for apps configured
    /// with explicit ``SignatureApp/publicKeysPEM``: give the backend ``publicKeyPEM`` and sign
    /// with ``signature(userId:lifetime:audience:issuer:kid:now:)``. The private key never leaves
    /// the value (its description does not show it).
    public struct SignatureKeyPair: Sendable, CustomStringConvertible {
        private let privateKey: _RSA.Signing.PrivateKey

        /// Generates a new RSA-2048 key pair.
        public init() throws {
            privateKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        }

        /// The public key in PEM (`-----BEGIN PUBLIC KEY-----`), for ``SignatureApp/publicKeysPEM``.
        public var publicKeyPEM: String {
            privateKey.publicKey.pemRepresentation
        }

        /// A signature (RS256 JWT) for `userId` as an app server makes it: `sub`, `iat`, `exp` =
        /// now + `lifetime`, and `aud`, `iss` and the header's `kid` when given.
        ///
        /// - Throws: ``TokenLifetimeError`` when `lifetime` is outside ``ReferenceBackend/tokenLifetimeRange``.
        public func signature(
            userId: String,
            lifetime: TimeInterval = 3600,
            audience: String? = ReferenceBackend.signatureAudience,
            issuer: String? = nil,
            kid: String? = nil,
            now: Date = Date()
        ) throws -> String {
            guard ReferenceBackend.tokenLifetimeRange.contains(lifetime) else { throw TokenLifetimeError(lifetime: lifetime) }
            let issuedAt = now.timeIntervalSince1970.rounded(.down)
            var payload: [String: JSONValue] = [
                "sub": .string(userId), "iat": .number(issuedAt), "exp": .number(issuedAt + lifetime.rounded(.down)),
            ]
            if let audience { payload["aud"] = .string(audience) }
            if let issuer { payload["iss"] = .string(issuer) }
            return try KeyRing.signRS256(payload: payload, kid: kid, key: privateKey)
        }

        /// Signs any payload bytes as they are (RS256, header `{"alg":"RS256","typ":"JWT"}` plus
        /// `kid` when given), to test how the backend reads payloads that no app server should make.
        public func sign(payloadJSON: Data, kid: String? = nil) throws -> String {
            try KeyRing.signRS256(signingInput: KeyRing.signingInput(alg: "RS256", kid: kid, payloadJSON: payloadJSON), key: privateKey)
        }

        /// `SignatureKeyPair(RSA-2048)`; never the key.
        public var description: String {
            "SignatureKeyPair(RSA-\(privateKey.keySizeInBits))"
        }
    }

    // MARK: Limits

    /// The header that carries the SDK signature: `X-Braze-Auth-Signature`.
    public static let signatureHeaderName = "X-Braze-Auth-Signature"
    /// The `aud` a signature may carry: `braze`.
    public static let signatureAudience = "braze"
    /// How many public keys a signature app may have: 3, as in Braze's dashboard.
    public static let maximumSignaturePublicKeys = KeyRing.maximumTrustedKeys
    /// The longest `request_id` accepted, in UTF-8 bytes.
    public static let maximumSignatureRequestIdSize = 200
    /// How many distinct `request_id`s ``signatureDeliveries()`` counts: 200,000. Once that many
    /// are known, requests with a new `request_id` are still answered as usual but no longer
    /// counted (ids already known keep counting), so hostile traffic cannot grow the ledger
    /// without bound.
    public static let maximumSignatureDeliveryIds = 200_000

    // MARK: Runtime

    /// Switches the enforcement of an app of ``Configuration/signatureApps`` from now on (as
    /// `PUT /__braze/apps/<appId>/enforcement` does).
    ///
    /// - Throws: ``UnknownSignatureAppError`` when there is no such app.
    public func setSignatureEnforcement(_ enforcement: SignatureEnforcement, appId: String) throws {
        guard signatures.setEnforcement(enforcement, of: appId) else { throw UnknownSignatureAppError(appId: appId) }
    }

    /// The enforcement an app runs with now, or `nil` when there is no such app.
    public func signatureEnforcement(appId: String) -> SignatureEnforcement? {
        signatures.enforcement(of: appId)
    }

    /// Mints an SDK signature as the app's server would (the same as `POST /app/braze-signature`),
    /// without HTTP: RS256 with the backend's current signing key and its `kid` in the header.
    ///
    /// - Parameters:
    ///   - userId: The `sub` claim (``TokenVariant/otherSubject`` appends `-other`, giving 21).
    ///   - variant: Which signature to mint: ``TokenVariant/valid`` verifies on an app with the app
    ///     server's keys; ``TokenVariant/expired`` gives 22, ``TokenVariant/missingExp`` 10,
    ///     ``TokenVariant/wrongAlgorithm`` (HS256) 24, ``TokenVariant/wrongKey`` 27.
    ///   - lifetime: Seconds until `exp`, within ``tokenLifetimeRange``; default ``Configuration/tokenLifetime``.
    ///     Time is the backend's ``Configuration/now``.
    ///   - audience: The `aud` claim, default `braze`; `nil` omits it.
    ///   - issuer: The `iss` claim, omitted by default.
    /// - Throws: ``TokenLifetimeError`` when `lifetime` is outside ``tokenLifetimeRange``.
    public func issueSignature(
        userId: String,
        variant: TokenVariant = .valid,
        lifetime: TimeInterval? = nil,
        audience: String? = "braze",
        issuer: String? = nil
    ) throws -> String {
        try keyRing.mint(
            userId: userId,
            variant: variant,
            lifetime: lifetime ?? configuration.tokenLifetime,
            audience: audience,
            issuer: issuer,
            claims: [:],
            now: configuration.now()
        ).token
    }

    /// How many times each `request_id` was accepted (answered `201`) on `POST /braze/apps/<appId>/data`,
    /// over all apps: a request delivered exactly once counts 1. At most
    /// ``maximumSignatureDeliveryIds`` ids are counted.
    public func signatureDeliveries() -> [String: Int] {
        signatures.ledger.deliveries()
    }

    /// How many signature failures of each ``SignatureErrorCode`` (by raw value) the app saw while
    /// its enforcement was Optional or Required, like Braze's dashboard breakdown; empty for an
    /// unknown app.
    public func signatureErrorReport(appId: String) -> [Int: Int] {
        signatures.ledger.errorReport(appId: appId)
    }

    /// `text`, cut to 64 characters with `…` after, for messages.
    static func shown(_ text: String) -> String {
        text.count <= 64 ? text : text.prefix(64) + "…"
    }
}

extension ReferenceBackend.Configuration {
    /// Why ``signatureApps`` cannot start, or `nil` when they can.
    var signatureProblem: String? {
        var seen: Set<String> = []
        for (index, app) in signatureApps.enumerated() {
            let allowed = app.id.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
            guard (1...64).contains(app.id.utf8.count), allowed else {
                return "signatureApps[\(index)].id must be 1...64 letters, digits, '-' or '_'"
            }
            guard seen.insert(app.id).inserted else {
                return "signatureApps[\(index)].id \(app.id) is used twice"
            }
            if app.apiKey?.isEmpty == true {
                return "signatureApps[\(index)] (\(app.id)): apiKey is empty; leave it nil not to check iss"
            }
            if let keys = app.publicKeysPEM {
                let maximum = ReferenceBackend.maximumSignaturePublicKeys
                guard keys.count <= maximum else {
                    return "signatureApps[\(index)] (\(app.id)) has \(keys.count) public keys; an app accepts at most \(maximum)"
                }
                for (keyIndex, pem) in keys.enumerated() where (try? Insecure.RSA.PublicKey(pem: pem)) == nil {
                    return "signatureApps[\(index)] (\(app.id)): publicKeysPEM[\(keyIndex)] is not an RSA public key (PEM, at least 2048 bits)"
                }
            }
        }
        return nil
    }
}

// MARK: - State

/// The signature apps, their enforcement now, and the ledger.
final class SignatureRegistry: Sendable {
    /// Where an app's public keys come from.
    enum Keys: Sendable {
        /// The key ring's trusted keys, as they are at each request.
        case appServer
        /// Keys configured as PEM.
        case explicit([KeyRing.VerificationKey])
    }

    struct App: Sendable {
        let id: String
        let apiKey: String?
        let keys: Keys
    }

    private let apps: [String: App]
    private let enforcements: Mutex<[String: ReferenceBackend.SignatureEnforcement]>
    let ledger: SignatureLedger

    private init(apps: [String: App], enforcements: [String: ReferenceBackend.SignatureEnforcement], ledger: SignatureLedger) {
        self.apps = apps
        self.enforcements = Mutex(enforcements)
        self.ledger = ledger
    }

    /// Builds the apps of a configuration that passed ``ReferenceBackend/Configuration/signatureProblem``.
    ///
    /// - Throws: ``ReferenceBackend/StartError/invalidConfiguration(_:)`` when a PEM does not parse.
    static func make(
        _ configured: [ReferenceBackend.SignatureApp],
        ledgerCapacity: Int = ReferenceBackend.maximumSignatureDeliveryIds
    ) async throws -> SignatureRegistry {
        var apps: [String: App] = [:]
        var enforcements: [String: ReferenceBackend.SignatureEnforcement] = [:]
        for app in configured {
            let keys: Keys
            if let pems = app.publicKeysPEM {
                var verificationKeys: [KeyRing.VerificationKey] = []
                for pem in pems {
                    do {
                        verificationKeys.append(try await KeyRing.verificationKey(pem: pem))
                    } catch {
                        throw ReferenceBackend.StartError.invalidConfiguration("signature app \(app.id): a public key is not an RSA public key in PEM")
                    }
                }
                keys = .explicit(verificationKeys)
            } else {
                keys = .appServer
            }
            apps[app.id] = App(id: app.id, apiKey: app.apiKey, keys: keys)
            enforcements[app.id] = app.enforcement
        }
        return SignatureRegistry(apps: apps, enforcements: enforcements, ledger: SignatureLedger(capacity: ledgerCapacity))
    }

    func app(_ id: String) -> App? {
        apps[id]
    }

    func enforcement(of id: String) -> ReferenceBackend.SignatureEnforcement? {
        enforcements.withLock { $0[id] }
    }

    /// Sets the enforcement of a known app; `false` for an unknown one.
    func setEnforcement(_ enforcement: ReferenceBackend.SignatureEnforcement, of id: String) -> Bool {
        guard apps[id] != nil else { return false }
        enforcements.withLock { $0[id] = enforcement }
        return true
    }
}

/// Accepted `request_id`s and failures per app, for exactly-once assertions and the error report.
///
/// Bounded: at most ``capacity`` distinct request ids (each at most
/// ``ReferenceBackend/maximumSignatureRequestIdSize`` bytes), and per configured app at most one
/// counter per ``ReferenceBackend/SignatureErrorCode``.
final class SignatureLedger: Sendable {
    private struct State {
        var deliveries: [String: Int] = [:]
        var uncounted = 0
        var errors: [String: [Int: Int]] = [:]
    }

    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Counts an accepted request; a new id past ``capacity`` is not counted.
    func accepted(requestId: String) {
        state.withLock { state in
            if let count = state.deliveries[requestId] {
                state.deliveries[requestId] = count + 1
            } else if state.deliveries.count < capacity {
                state.deliveries[requestId] = 1
            } else {
                state.uncounted += 1
            }
        }
    }

    /// Counts a failure seen under Optional or Required enforcement.
    func failed(appId: String, code: ReferenceBackend.SignatureErrorCode) {
        state.withLock { $0.errors[appId, default: [:]][code.rawValue, default: 0] += 1 }
    }

    func deliveries() -> [String: Int] {
        state.withLock { $0.deliveries }
    }

    /// Accepted requests whose new id found the ledger full.
    var uncounted: Int {
        state.withLock { $0.uncounted }
    }

    func errorReport(appId: String) -> [Int: Int] {
        state.withLock { $0.errors[appId] ?? [:] }
    }
}

// MARK: - Verification

/// Why a signature failed: the Braze error code and a short sentence that never quotes the signature.
struct SignatureFailure: Sendable, Equatable {
    var code: ReferenceBackend.SignatureErrorCode
    var reason: String
}

/// The fields of a `POST /braze/apps/<appId>/data` body the backend reads.
struct SignatureDataBody: Sendable, Equatable {
    /// `nil` for an anonymous user (`user_id` absent or null).
    var userId: String?
    var requestId: String
    /// The `user_id` of each event that has one.
    var eventUserIds: [String]

    struct Invalid: Error {
        var message: String
    }

    /// Reads a body with the bounded parser: a JSON object with `request_id` (a string of
    /// 1...``ReferenceBackend/maximumSignatureRequestIdSize`` bytes), an optional non-empty string
    /// `user_id` and an optional array `events` of objects whose `user_id` and `name`, when
    /// present, are strings. Null counts as absent.
    static func read(_ body: Data) throws(Invalid) -> SignatureDataBody {
        let depth = ReferenceBackend.maximumBodyJSONDepth
        guard let fields = JSONValue.object(from: body, maximumDepth: depth) else {
            throw Invalid(message: "The body must be a JSON object (nesting at most \(depth) levels, no repeated keys).")
        }
        let maximum = ReferenceBackend.maximumSignatureRequestIdSize
        guard let requestId = fields["request_id"]?.stringValue, (1...maximum).contains(requestId.utf8.count) else {
            throw Invalid(message: "request_id must be a string of 1...\(maximum) bytes.")
        }
        var userId: String?
        switch fields["user_id"] {
        case nil, .null?: userId = nil
        case .string(let value)? where !value.isEmpty: userId = value
        default: throw Invalid(message: "user_id must be a non-empty string, or absent for an anonymous user.")
        }
        var eventUserIds: [String] = []
        switch fields["events"] {
        case nil, .null?:
            break
        case .array(let events)?:
            for event in events {
                guard let event = event.objectValue else { throw Invalid(message: "Each event must be a JSON object.") }
                switch event["name"] {
                case nil, .null?, .string?: break
                default: throw Invalid(message: "An event's name must be a string.")
                }
                switch event["user_id"] {
                case nil, .null?: break
                case .string(let value)?: eventUserIds.append(value)
                default: throw Invalid(message: "An event's user_id must be a string.")
                }
            }
        default:
            throw Invalid(message: "events must be an array of event objects.")
        }
        return SignatureDataBody(userId: userId, requestId: requestId, eventUserIds: eventUserIds)
    }
}

extension SignatureRegistry {
    /// Checks the signature of an identified user's request, in Braze's order: 26, 20, 24, 25, 27,
    /// 10, 22, 23, 21, 28. `nil` when it passes.
    func check(
        _ header: String?,
        app: App,
        body: SignatureDataBody,
        userId: String,
        keyRing: KeyRing,
        now: Date
    ) async -> SignatureFailure? {
        func fail(_ code: ReferenceBackend.SignatureErrorCode, _ reason: String) -> SignatureFailure {
            SignatureFailure(code: code, reason: reason)
        }
        let signature = header?.trimmingCharacters(in: .whitespaces) ?? ""
        guard !signature.isEmpty else {
            return fail(.missingToken, "No signature was sent in the \(ReferenceBackend.signatureHeaderName) header.")
        }
        let limit = ReferenceBackend.maximumAuthorizationHeaderSize
        guard signature.utf8.count <= limit else {
            return fail(.decodingError, "The signature is longer than \(limit) bytes; it was not decoded.")
        }
        let depth = ReferenceBackend.maximumTokenJSONDepth
        guard let (tokenHeader, claims, signaturePart) = KeyRing.decodeCompact(signature), Base64URL.decode(signaturePart) != nil else {
            return fail(
                .decodingError,
                "The signature is not a JWT of three base64url parts with a JSON object header and payload (nesting at most \(depth) levels, no repeated keys)."
            )
        }
        guard tokenHeader["alg"]?.stringValue == "RS256" else {
            return fail(.incorrectAlgorithm, "The signature's algorithm is not supported; sign with RS256.")
        }
        let keys: [KeyRing.VerificationKey] =
            switch app.keys {
            case .appServer: keyRing.verificationKeys
            case .explicit(let keys): keys
            }
        guard !keys.isEmpty else {
            return fail(.publicKeyError, "The app has no public key to verify signatures with.")
        }
        guard await KeyRing.signatureVerifies(signature, kid: tokenHeader["kid"]?.stringValue, keys: keys) else {
            return fail(.noMatchingPublicKeys, "No public key of the app verifies the signature.")
        }
        guard let expiresAt = claims["exp"]?.numberValue else {
            return fail(.expirationRequired, "The signature has no numeric exp claim; an expiration is required.")
        }
        guard expiresAt > now.timeIntervalSince1970 else {
            return fail(.expired, "The signature expired at \(KeyRing.seconds(expiresAt)) (now \(KeyRing.seconds(now.timeIntervalSince1970))).")
        }
        guard let subject = claims["sub"]?.stringValue else {
            return fail(.invalidPayload, "The signature payload has no sub claim naming the user as a string.")
        }
        if let audience = claims["aud"] {
            let audiences: [String]? =
                switch audience {
                case .string(let value): [value]
                case .array(let values): values.allSatisfy { $0.stringValue != nil } ? values.compactMap(\.stringValue) : nil
                default: nil
                }
            guard audiences?.contains(ReferenceBackend.signatureAudience) == true else {
                return fail(.invalidPayload, "The signature's aud claim must be \(ReferenceBackend.signatureAudience) when present.")
            }
        }
        if let apiKey = app.apiKey, let issuer = claims["iss"], issuer.stringValue != apiKey {
            return fail(.invalidPayload, "The signature's iss claim must be the app's API key when present.")
        }
        guard subject == userId else {
            return fail(.subjectMismatch, "The signature's subject does not match the request's user_id.")
        }
        guard body.eventUserIds.allSatisfy({ $0 == userId }) else {
            return fail(.payloadUserIdMismatch, "An event's user_id does not match the request's user_id.")
        }
        return nil
    }
}

// MARK: - Routes

extension HTTPFields {
    /// The `X-Braze-Auth-Signature` value (several fields joined with `, `, as for `Authorization`),
    /// or `nil` when there is none.
    var brazeAuthSignature: String? {
        let name = ReferenceBackend.signatureHeaderName.lowercased()
        let values = filter { $0.name.canonicalName == name }.map(\.value)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }
}

extension Routes {
    func registerSignatures(on router: Router<BasicRequestContext>) {
        router.post("/braze/apps/:appId/data") { request, context in
            try await self.signatureData(request, appId: context.parameters.get("appId") ?? "")
        }
        router.post("/app/braze-signature") { request, _ in
            try self.requireTestRoutes()
            return try await self.mintSignature(request)
        }
        router.put("/__braze/apps/:appId/enforcement") { request, context in
            try self.requireTestRoutes()
            return try await self.putEnforcement(request, appId: context.parameters.get("appId") ?? "")
        }
    }

    private static func unknownApp(_ appId: String) -> Response {
        failure(.unknownApp, "No app with id \(ReferenceBackend.shown(appId)).")
    }

    private func signatureData(_ request: Request, appId: String) async throws -> Response {
        guard case .success(let data) = try await record(request) else { return Self.bodyTooLarge() }
        guard let app = signatures.app(appId), let enforcement = signatures.enforcement(of: appId) else {
            return Self.unknownApp(appId)
        }
        let body: SignatureDataBody
        do {
            body = try SignatureDataBody.read(data)
        } catch {
            return Self.failure(.invalidRequest, error.message)
        }
        // Disabled apps and anonymous users are not checked at all.
        guard enforcement != .disabled, let userId = body.userId else {
            return try accept(body, authError: nil)
        }
        let header = request.headers.brazeAuthSignature
        guard let failure = await signatures.check(header, app: app, body: body, userId: userId, keyRing: keyRing, now: configuration.now()) else {
            return try accept(body, authError: nil)
        }
        signatures.ledger.failed(appId: appId, code: failure.code)
        if enforcement == .optional {
            return try accept(body, authError: AuthErrorAnswer(errorCode: failure.code.rawValue, reason: failure.reason, optional: true))
        }
        let rejected = SignatureRejectedAnswer(
            authError: AuthErrorAnswer(errorCode: failure.code.rawValue, reason: failure.reason, optional: nil),
            userId: userId
        )
        return try Self.json(.unauthorized, rejected)
    }

    private func accept(_ body: SignatureDataBody, authError: AuthErrorAnswer?) throws -> Response {
        signatures.ledger.accepted(requestId: body.requestId)
        let answer = SignatureAcceptedAnswer(requestId: body.requestId, userId: authError == nil ? nil : body.userId, authError: authError)
        return try Self.json(.created, answer)
    }

    private func mintSignature(_ request: Request) async throws -> Response {
        let minted = try await mintRequested(
            request,
            defaultAudience: ReferenceBackend.signatureAudience,
            defaultIssuer: nil,
            now: configuration.now(),
            header: (name: ReferenceBackend.signatureHeaderName, prefix: "")
        )
        switch minted {
        case .refused(let response): return response
        case .minted(let signature, _): return try Self.json(.ok, ["signature": signature])
        }
    }

    private func putEnforcement(_ request: Request, appId: String) async throws -> Response {
        guard let data = try await Self.collectBody(request) else { return Self.bodyTooLarge() }
        guard signatures.app(appId) != nil else { return Self.unknownApp(appId) }
        let values = ReferenceBackend.SignatureEnforcement.allCases.map(\.rawValue).joined(separator: ", ")
        guard let fields = JSONValue.object(from: data, maximumDepth: ReferenceBackend.maximumBodyJSONDepth),
            let enforcement = fields["enforcement"]?.stringValue.flatMap(ReferenceBackend.SignatureEnforcement.init(rawValue:)),
            signatures.setEnforcement(enforcement, of: appId)
        else {
            return Self.failure(.invalidRequest, "Expected {\"enforcement\": one of \(values)}.")
        }
        return try Self.json(.ok, EnforcementAnswer(appId: appId, enforcement: enforcement.rawValue))
    }
}

/// `"auth_error"`: `{"error_code": N, "reason": "...", "optional": true}` (`optional` only when accepted).
struct AuthErrorAnswer: Encodable {
    var errorCode: Int
    var reason: String
    var optional: Bool?
    private enum CodingKeys: String, CodingKey { case errorCode = "error_code", reason, optional }
}

/// 201: `{"success": true, "request_id": "..."}`, plus `user_id` and `auth_error` under Optional.
struct SignatureAcceptedAnswer: Encodable {
    var success = true
    var requestId: String
    var userId: String?
    var authError: AuthErrorAnswer?
    private enum CodingKeys: String, CodingKey { case success, requestId = "request_id", userId = "user_id", authError = "auth_error" }
}

/// 401: `{"auth_error": {"error_code": N, "reason": "..."}, "user_id": "..."}`.
struct SignatureRejectedAnswer: Encodable {
    var authError: AuthErrorAnswer
    var userId: String
    private enum CodingKeys: String, CodingKey { case authError = "auth_error", userId = "user_id" }
}

/// 200 from `PUT /__braze/apps/<appId>/enforcement`.
struct EnforcementAnswer: Encodable {
    var success = true
    var appId: String
    var enforcement: String
    private enum CodingKeys: String, CodingKey { case success, appId = "app_id", enforcement }
}
