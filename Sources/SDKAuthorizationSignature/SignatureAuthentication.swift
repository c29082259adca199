import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit

extension AuthorizationScheme {
    /// A per-user signature in a header of its own (Braze-style SDK authentication), supplied by a
    /// ``SignatureAuthentication``.
    public static let signature = AuthorizationScheme("signature")
}

/// The signature mode (Braze-style SDK authentication): the app's server signs a JWT per user, the
/// app hands it over with ``changeUser(_:signature:)`` or ``setSignature(_:for:)``, and every request
/// the policy assigns to `AuthorizationScheme/signature` carries it in a header of its own
/// (default `X-Braze-Auth-Signature`).
///
/// ```swift
/// let authentication = try SignatureAuthentication()
/// try authentication.changeUser("user-42", signature: jwtFromMyServer)
/// let subscription = authentication.subscribeToFailures { failure in
///     guard let user = failure.userId, !failure.optional else { return }
///     Task { try authentication.setSignature(await myServer.newSignature(for: user), for: user) }
/// }
///
/// var policy = AuthorizationPolicy()
/// policy.add(try AuthorizationRule(host: "sdk.example.com", path: "/api/**", scheme: .signature))
/// let client = AuthorizedHTTPClient(authorizer: try RequestAuthorizer(policy: policy, providers: [.signature: authentication]))
/// let directory = SignatureRequestQueue.defaultDirectory(for: try CredentialNamespace("com.example.sdk"))
/// let queue = try SignatureRequestQueue(directory: directory, authentication: authentication, client: client)
/// try await queue.enqueue(OutgoingRequest(method: "POST", url: dataURL, body: events))
/// ```
///
/// - User IDs are compared as exact bytes (UTF-8), with no Unicode normalization, as servers compare
///   them: `"jos\u{E9}"` and `"jose\u{301}"` are two users, each with a signature, queue lane and
///   requests of their own, although Swift's `==` finds the two strings equal.
/// - Each user keeps its own signature: requests queued for a user before ``changeUser(_:signature:)``
///   are still sent with that user's current signature, never the next user's and never an older one.
///   The signatures of the ``maximumRememberedUsers`` most recent users are kept.
/// - A rejection reaches the failure subscribers once per rejected signature, however many requests
///   carried it; the request fails (`RejectionDecision/fail`) and a ``SignatureRequestQueue``
///   retries it with backoff once the app has supplied a new signature.
/// - Subscribers added late do not receive earlier failures.
///
/// Its `description` and mirror never show a signature.
public final class SignatureAuthentication: AuthorizationProvider, Sendable, CustomStringConvertible, CustomReflectable {
    /// `X-Braze-Auth-Signature`.
    public static let defaultHeaderName = "X-Braze-Auth-Signature"
    /// How many users' signatures are kept (64): the current user's and those of the users before.
    public static let maximumRememberedUsers = 64
    /// The longest user ID accepted, in UTF-8 bytes (997, as Braze).
    public static let maximumUserIDLength = 997
    /// The longest signature accepted, in bytes (8 KB).
    public static let maximumSignatureLength = 8_192

    /// The user a request is sent for, and the signature chosen for it, pinned by the request queue
    /// for the duration of one send.
    struct Pinned: Sendable {
        let userId: String?
        let signature: String?
    }

    @TaskLocal static var pinned: Pinned?

    /// A failure subscriber of the app, or the request queue watching for new signatures.
    private enum Listener {
        case failures(@Sendable (SignatureFailure) -> Void)
        case signatureChanges(@Sendable (String) -> Void)
    }

    /// A reported failure's user (compared as exact bytes), signature and enforcement.
    private struct Reported: Equatable {
        let user: UserKey?
        let signature: String?
        let optional: Bool
    }

    private struct State {
        var currentUser: String?
        /// Signatures by user (compared as exact bytes), the most recently changed user last.
        var signatures: [UserKey: String] = [:]
        var userOrder: [UserKey] = []
        var listeners: [UInt64: Listener] = [:]
        var nextListenerID: UInt64 = 0
        /// The failures already reported, oldest first.
        var reported: [Reported] = []
    }

    /// The header field that carries the signature.
    public let headerName: String
    /// Whether signatures are sent: `false` only for the mode loaded by name from a configuration
    /// that turns signature authentication off (Braze's `EnableSDKAuthentication` off).
    let sendsSignatures: Bool

    private let diagnostics: any DiagnosticsSink
    private let state = Locked(State())
    /// Where the failure subscribers are called, one failure after another in the order they were
    /// reported: never on the task of the request that reported it, which a slow subscriber would hold.
    private let deliveries = DispatchQueue(label: "SDKAuthorization.SignatureAuthentication.failures")

    /// Creates the signature mode with no user yet.
    ///
    /// - Parameters:
    ///   - headerName: The header field of the signature; default ``defaultHeaderName``.
    ///   - diagnostics: Where user changes and failures are reported (never a signature).
    /// - Throws: `ConfigurationError/invalidValue(key:reason:)` when `headerName` is not an HTTP
    ///   field name, is `Authorization` (which the other schemes own), is `Idempotency-Key` (the
    ///   request queue's idempotency header), or is a field the transport
    ///   owns (`Host`, `Content-Length`, `Transfer-Encoding`, `Connection`, `Cookie`, `Content-Type`,
    ///   any `Proxy-*`, a `:` pseudo-header and the other framing and hop-by-hop fields).
    public convenience init(headerName: String = SignatureAuthentication.defaultHeaderName, diagnostics: any DiagnosticsSink = StandardErrorDiagnosticsSink.inDebugBuilds) throws(ConfigurationError) {
        try self.init(headerName: headerName, sendsSignatures: true, diagnostics: diagnostics)
    }

    /// The request queue's default idempotency header, lowercased: never a signature's header.
    static let idempotencyHeaderName = "idempotency-key"

    /// ``init(headerName:diagnostics:)``; with `sendsSignatures` false every request goes without a signature.
    init(headerName: String, sendsSignatures: Bool, diagnostics: any DiagnosticsSink) throws(ConfigurationError) {
        guard HeaderFieldRules.isValidName(headerName), headerName.utf8.count <= 128 else {
            throw .invalidValue(key: "headerName", reason: "must be an HTTP field name of at most 128 characters")
        }
        guard headerName.lowercased() != "authorization" else {
            throw .invalidValue(key: "headerName", reason: "must not be Authorization: the signature travels in a header of its own")
        }
        guard headerName.lowercased() != SignatureAuthentication.idempotencyHeaderName else {
            throw .invalidValue(key: "headerName", reason: "must not be Idempotency-Key: that header carries a queued request's idempotency key")
        }
        guard !HeaderFieldRules.isTransportOwnedName(headerName) else {
            throw .invalidValue(key: "headerName", reason: "\(LogText.escaped(headerName, limit: 64)) is a header the transport owns (framing, hop-by-hop, cookie or proxy)")
        }
        self.headerName = headerName
        self.sendsSignatures = sendsSignatures
        self.diagnostics = diagnostics
    }

    public var description: String {
        let (user, count) = state.withLock { ($0.currentUser, $0.signatures.count) }
        return "SignatureAuthentication(\(headerName), user: \(user.map { LogText.escaped($0, limit: 64) } ?? "none"), signatures: \(count), redacted\(sendsSignatures ? "" : ", sending disabled"))"
    }

    public var customMirror: Mirror { Mirror(self, children: ["description": description], displayStyle: .class) }

    // MARK: Users and signatures

    /// The current user, or `nil` before the first ``changeUser(_:signature:)`` and after ``identityDidChange()``.
    public var currentUserId: String? { state.withLock { $0.currentUser } }

    /// Makes `userId` the current user, with `signature` when given (otherwise the signature the
    /// user had, if any). Requests already queued for the previous user keep that user's signature.
    ///
    /// - Throws: `ConfigurationError/invalidValue(key:reason:)` for an empty or overlong user ID,
    ///   one with control characters, or a signature that is not a compact JWT that a header can carry.
    public func changeUser(_ userId: String, signature: String? = nil) throws(ConfigurationError) {
        try Self.check(userId: userId)
        if let signature { try Self.check(signature: signature) }
        state.withLock { state in
            state.currentUser = userId
            if let signature { state.signatures[UserKey(userId)] = signature }
            Self.touch(UserKey(userId), in: &state)
        }
        diagnostics.log(.info, "Signature mode: user changed to \(LogText.escaped(userId, limit: 64))\(signature == nil ? " without a new signature" : "")")
        if let signature { signatureChanged(for: userId, signature) }
    }

    /// Replaces the signature of `userId` (default: the current user) mid-session, e.g. after a
    /// failure subscriber fetched a new one. Queued requests of that user are retried with it.
    ///
    /// - Throws: `ConfigurationError/invalidValue(key:reason:)` for a bad signature or user ID, or
    ///   when no user is given and there is no current user.
    public func setSignature(_ signature: String, for userId: String? = nil) throws(ConfigurationError) {
        try Self.check(signature: signature)
        if let userId { try Self.check(userId: userId) }
        let user = state.withLock { state -> String? in
            guard let user = userId ?? state.currentUser else { return nil }
            state.signatures[UserKey(user)] = signature
            Self.touch(UserKey(user), in: &state)
            return user
        }
        guard let user else {
            throw .invalidValue(key: "signature", reason: "there is no current user; call changeUser(_:signature:) first")
        }
        diagnostics.log(.info, "Signature mode: new signature for \(LogText.escaped(user, limit: 64))")
        signatureChanged(for: user, signature)
    }

    /// The signature kept for `userId`, if any.
    func signature(for userId: String) -> String? {
        state.withLock { $0.signatures[UserKey(userId)] }
    }

    private static func touch(_ user: UserKey, in state: inout State) {
        state.userOrder.removeAll { $0 == user }
        state.userOrder.append(user)
        while state.userOrder.count > maximumRememberedUsers {
            let oldest = state.userOrder.removeFirst()
            state.signatures[oldest] = nil
        }
    }

    static func check(userId: String) throws(ConfigurationError) {
        guard (1...maximumUserIDLength).contains(userId.utf8.count) else {
            throw .invalidValue(key: "userId", reason: "must be 1 to \(maximumUserIDLength) UTF-8 bytes")
        }
        guard !userId.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == "\u{2028}" || $0 == "\u{2029}" }) else {
            throw .invalidValue(key: "userId", reason: "must not contain control characters")
        }
    }

    static func check(signature: String) throws(ConfigurationError) {
        guard !signature.isEmpty, signature.utf8.count <= maximumSignatureLength else {
            throw .invalidValue(key: "signature", reason: "must be 1 to \(maximumSignatureLength) bytes")
        }
        guard HeaderFieldRules.checkBearer(signature) == .valid, signature.utf8.count(where: { $0 == UInt8(ascii: ".") }) == 2 else {
            throw .invalidValue(key: "signature", reason: "must be a compact JWT (three base64url parts)")
        }
    }

    // MARK: Failure subscriptions

    /// Calls `handler` with every authentication failure reported from now on, once per rejected
    /// signature, in the order they were reported. It is called off the request that received the
    /// failure, on a serial queue of its own, so a slow handler never holds a request; it does hold
    /// the failures after it (start a `Task` to fetch a new signature). Keep the returned
    /// subscription and ``SignatureFailureSubscription/cancel()`` it when done; it also ends when
    /// released, and a failure not yet delivered then is not.
    public func subscribeToFailures(_ handler: @escaping @Sendable (SignatureFailure) -> Void) -> SignatureFailureSubscription {
        add(.failures(handler))
    }

    private func add(_ listener: Listener) -> SignatureFailureSubscription {
        let id = state.withLock { state -> UInt64 in
            state.nextListenerID += 1
            state.listeners[state.nextListenerID] = listener
            return state.nextListenerID
        }
        return SignatureFailureSubscription { [weak self] in
            _ = self?.state.withLock { $0.listeners.removeValue(forKey: id) }
        }
    }

    /// Reports `failure` to the subscribers unless this signature of this user was reported already.
    func publish(_ failure: SignatureFailure) {
        let key = Reported(user: failure.userId.map(UserKey.init), signature: failure.signature, optional: failure.optional)
        let reported = state.withLock { state -> Bool in
            guard !state.reported.contains(key) else { return false }
            state.reported.append(key)
            if state.reported.count > 256 { state.reported.removeFirst(state.reported.count - 256) }
            let subscribers = state.listeners.filter { if case .failures = $0.value { true } else { false } }.keys.sorted()
            // Queued while the lock is held, so deliveries keep the order of the reports.
            deliveries.async { [weak self] in self?.deliver(failure, to: subscribers) }
            return true
        }
        guard reported else { return }
        diagnostics.log(failure.optional ? .info : .warning, failure.description)
    }

    /// Calls the subscribers `ids` that are still subscribed with `failure`; on ``deliveries``.
    private func deliver(_ failure: SignatureFailure, to ids: [UInt64]) {
        for id in ids {
            guard case .failures(let handler)? = state.withLock({ $0.listeners[id] }) else { continue }
            handler(failure)
        }
    }

    /// Returns once every failure reported before the call has reached the subscribers.
    ///
    /// Subscribers are called off the request that received a failure, so a request (or a
    /// ``SignatureRequestQueue/flush()``) may return before they are; await this before checking
    /// what they received, in a test for instance.
    public func failuresDelivered() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            deliveries.async { continuation.resume() }
        }
    }

    /// Calls `observer` with the user whose signature changed; for the request queue.
    func observeSignatureChanges(_ observer: @escaping @Sendable (String) -> Void) -> SignatureFailureSubscription {
        add(.signatureChanges(observer))
    }

    private func signatureChanged(for user: String, _ signature: String) {
        let observers = state.withLock { $0.listeners.values.compactMap { if case .signatureChanges(let observer) = $0 { observer } else { nil } } }
        for observer in observers { observer(user) }
    }

    // MARK: AuthorizationProvider

    /// The signature of the request's user in ``headerName``, or `Credential/omitted` when that
    /// user has none (the server then answers `MISSING_TOKEN` where it enforces signatures). The
    /// user is the one a ``SignatureRequestQueue`` entry belongs to, otherwise the current user.
    public func credential(for context: AuthorizationContext) async throws -> Credential {
        guard sendsSignatures else {
            diagnostics.log(.debug, "\(context.requestName) sent without a signature: signature authentication is disabled in the configuration")
            return .omitted
        }
        let signature: String?
        if let pinned = Self.pinned {
            signature = pinned.signature
        } else {
            signature = state.withLock { state in state.currentUser.flatMap { state.signatures[UserKey($0)] } }
        }
        guard let signature else {
            diagnostics.log(.debug, "\(context.requestName) sent without a signature: its user has none")
            return .omitted
        }
        return .header(headerName, value: signature)
    }


    /// Reports the failure in the response body (`auth_error`) to the subscribers, once per
    /// signature, and fails the request: a new signature has to come from the app's server.
    public func credentialRejected(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async -> RejectionDecision {
        let user = Self.pinned?.userId ?? owner(of: credential.value)
        if let failure = SignatureFailure.reported(in: response.body, signature: credential.value, requestUser: user) {
            publish(failure)
        } else {
            diagnostics.log(.warning, "\(context.requestName): HTTP \(response.statusCode) without an auth_error body; no failure reported")
        }
        return .fail
    }

    /// Reports the failure an accepted answer carries under optional enforcement (a 2xx whose body
    /// holds an `auth_error`, the signature verified but not enforced) to the subscribers, once per
    /// signature, whichever way the request was sent: ``SignatureRequestQueue``,
    /// `AuthorizedHTTPClient`, `RequestAuthorizer/send(_:endpoint:through:)`, the `URLSession`
    /// convenience or an OpenAPI middleware. Any other answer, or a body that is not such a report,
    /// reports nothing.
    public func credentialAccepted(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async {
        guard (200...299).contains(response.statusCode), !response.body.isEmpty else { return }
        let user = Self.pinned?.userId ?? owner(of: credential.value)
        if let failure = SignatureFailure.reported(in: response.body, signature: credential.value, requestUser: user) {
            publish(failure)
        }
    }

    /// `true`: an accepted answer may carry an optional-enforcement report (``credentialAccepted(_:response:context:)``).
    public var inspectsAcceptedResponses: Bool { true }

    /// The app's identity changed (logout, `anonymize`): there is no current user until the next
    /// ``changeUser(_:signature:)``. Signatures of earlier users stay for their queued requests.
    public func identityDidChange() async {
        await identityDidChange(to: nil)
    }

    /// The app's user changed to `identity` (`AuthorizedHTTPClient/identityDidChange(to:)`): it
    /// becomes the current user, with the signature it had, if any, and the requests queued from
    /// now on go in its lane; `nil`, or a user ID ``changeUser(_:signature:)`` refuses, leaves no
    /// current user. Signatures of earlier users stay for their queued requests.
    public func identityDidChange(to identity: String?) async {
        guard let identity, (try? Self.check(userId: identity)) != nil else {
            state.withLock { $0.currentUser = nil }
            return
        }
        try? changeUser(identity)
    }

    /// `true`: it answers at once from the signatures it holds.
    public var endsByDeadline: Bool { true }

    private func owner(of signature: String?) -> String? {
        guard let signature else { return nil }
        return state.withLock { state in
            if let current = state.currentUser, state.signatures[UserKey(current)] == signature { return current }
            return state.signatures.first { $0.value == signature }?.key.userId
        }
    }
}

/// A subscription to signature failures (or signature changes); ``cancel()`` ends it, and so does
/// releasing it.
public final class SignatureFailureSubscription: Sendable {
    private let onCancel: Locked<(@Sendable () -> Void)?>

    init(_ onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = Locked(onCancel)
    }

    /// Stops the deliveries. Calling it again does nothing.
    public func cancel() {
        let action = onCancel.withLock { action -> (@Sendable () -> Void)? in
            defer { action = nil }
            return action
        }
        action?()
    }

    deinit { cancel() }
}

/// The signature mode (`SDKAuthorization.Signature`, Braze-style SDK authentication): a
/// ``SignatureAuthentication`` with the default header, ``SignatureAuthentication/defaultHeaderName``.
/// Register it, and a configuration chooses it by name or, as Braze's integration guide says, with
/// `EnableSDKAuthentication` true in a `Braze` dictionary:
///
/// ```swift
/// registry.register(SignatureMode())
/// ```
///
/// Its key `signatureAuthenticationEnabled` (default `true`; Braze's top-level spelling
/// `EnableSDKAuthentication`) set to `false` keeps the mode but sends no signature. The app
/// reaches the provider as `client.provider as? SignatureAuthentication` to change the user and
/// subscribe to failures.
public struct SignatureMode: StandaloneProviderFactory {
    /// `SDKAuthorization.Signature`.
    public static let providerName = "SDKAuthorization.Signature"

    /// `signatureAuthenticationEnabled`, spelt `EnableSDKAuthentication` by Braze at the top of a
    /// file or in its `Braze` dictionary (where `true` also chooses the mode).
    public static let settingKeys = [
        ModeSettingKey("signatureAuthenticationEnabled", type: .bool, default: .bool(true),
                       meaning: "The signature mode's switch: `false` keeps the mode but sends no signature.",
                       vendorSpellings: [.init(["EnableSDKAuthentication"], vendor: "Braze"),
                                         .init(["Braze", "EnableSDKAuthentication"], vendor: "Braze", choosesMode: true)]),
    ]

    /// The mode; it needs nothing from the app.
    public init() {}

    /// A new ``SignatureAuthentication`` sending signatures unless the configuration turns them off.
    public func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider {
        try SignatureAuthentication(headerName: SignatureAuthentication.defaultHeaderName,
                                    sendsSignatures: context.modeSettings.bool("signatureAuthenticationEnabled") ?? true, diagnostics: context.diagnostics)
    }
}
