import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit
import Testing

// Small test doubles every test target may share.

/// A gate an async test opens once; every waiter resumes then.
public final class AsyncGate: Sendable {
    private let state = Locked<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    public init() {}

    public func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    public func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        waiters.forEach { $0.resume() }
    }
}

/// Yields until `condition` holds; records an issue instead of hanging forever.
public func eventually(_ what: String, _ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async {
    for _ in 0..<200_000 {
        if condition() { return }
        await Task.yield()
    }
    Issue.record("never happened: \(what)", sourceLocation: sourceLocation)
}

/// A thread-safe counter for factories.
public final class Counter: Sendable {
    private let value = Locked(0)
    /// Adds one and returns the new value.
    public init() {}
    public func increment() -> Int { value.withLock { $0 += 1; return $0 } }
    public var current: Int { value.withLock { $0 } }
}

/// A credential store in memory, keyed by the identity's exact bytes as every store must be.
public final class MemoryCredentialStore: CredentialStore, Sendable {
    public let stored = Locked<[Data: StoredCredential]>([:])
    public let namespace = CredentialNamespace.testing
    public init() {}
    public func load(identity: String) throws -> StoredCredential? { stored.withLock { $0[Data(identity.utf8)] } }
    public func save(_ credential: StoredCredential, identity: String) throws { stored.withLock { $0[Data(identity.utf8)] = credential } }
    public func remove(identity: String) throws { _ = stored.withLock { $0.removeValue(forKey: Data(identity.utf8)) } }
}

/// A transport that ends its sends by the deadline it is handed: it records the deadline and the
/// task it ran in, then answers through `answer`.
public final class DeadlineEndingTransport: HTTPTransport {
    public let deadlines = Locked<[RequestDeadline]>([])
    public let tasks = Locked<[Int?]>([])
    public let sentWithoutDeadline = Locked(0)
    private let answer: @Sendable (OutgoingRequest, RequestDeadline, any AuthorizationClock) async throws -> ServerResponse

    public init(answer: @escaping @Sendable (OutgoingRequest, RequestDeadline, any AuthorizationClock) async throws -> ServerResponse = { _, _, _ in
        ServerResponse(statusCode: 200)
    }) {
        self.answer = answer
    }

    public var endsByDeadline: Bool { true }

    public func send(_ request: OutgoingRequest) async throws -> ServerResponse {
        sentWithoutDeadline.withLock { $0 += 1 }
        return ServerResponse(statusCode: 200)
    }

    public func send(_ request: OutgoingRequest, deadline: RequestDeadline, clock: any AuthorizationClock) async throws -> ServerResponse {
        deadlines.withLock { $0.append(deadline) }
        tasks.withLock { $0.append(currentTaskHash()) }
        return try await answer(request, deadline, clock)
    }
}


/// The hash of the task the caller runs in, to tell "the caller's task" from "a task of its own".
public func currentTaskHash() -> Int? {
    withUnsafeCurrentTask { $0?.hashValue }
}


extension CredentialNamespace {
    /// The namespace the tests' stores belong to.
    public static let testing = try! CredentialNamespace("com.example.tests")
}

extension CredentialKind {
    /// The slot of `TokenExchangeProvider(exchangeURL: https://platform.example.com/ccai/exchange)`,
    /// the tests' exchange URL (its `credentialKind`).
    public static let exchangeAtPlatform = CredentialKind.tokenExchange.scoped(to: "https://platform.example.com/ccai/exchange")
    /// The slot of `IDTokenStore(authorizedDomains: ["api.example.com"])` (its `credentialKind`).
    public static let idTokenOfAPI = CredentialKind.idToken.scoped(to: "api.example.com")
    /// The slot of `IDTokenStore(authorizedDomains: ["platform.example.com"])` (its `credentialKind`).
    public static let idTokenOfPlatform = CredentialKind.idToken.scoped(to: "platform.example.com")
}

/// An app's decorator written the naive way, as an app adds metrics or logging around a provider:
/// it implements `AuthorizationProvider` by forwarding the two calls every provider answers,
/// `credential(for:)` and `credentialRejected(_:response:context:)`, and counts them. It forwards
/// nothing else: not `endsByDeadline`, not `identityDidChange`, and it is no `Credential.Issuer`,
/// so the authorizer sees none of the wrapped provider's extras. A guarantee the wrapped provider
/// keeps installed directly must hold through it.
public struct CountingForwardingDecorator: AuthorizationProvider {
    public let wrapped: any AuthorizationProvider
    /// Calls to `credential(for:)`.
    public let credentialCalls = Counter()
    /// Calls to `credentialRejected(_:response:context:)`.
    public let rejections = Counter()

    public init(_ wrapped: any AuthorizationProvider) { self.wrapped = wrapped }

    public func credential(for context: AuthorizationContext) async throws -> Credential {
        _ = credentialCalls.increment()
        return try await wrapped.credential(for: context)
    }

    public func credentialRejected(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async -> RejectionDecision {
        _ = rejections.increment()
        return await wrapped.credentialRejected(credential, response: response, context: context)
    }
}
