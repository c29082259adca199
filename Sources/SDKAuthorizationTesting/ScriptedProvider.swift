import Foundation
import SDKAuthorization

/// A provider that answers from a script and records what it was asked and told.
///
/// ```swift
/// let provider = ScriptedProvider(.token("first"), .token("second"))
/// provider.rejectionDecision = .retry
/// ```
public final class ScriptedProvider: AuthorizationProvider, Sendable {
    /// One scripted answer.
    public enum Step: Sendable {
        /// Answer with this bearer token.
        case token(String)
        /// Answer with this credential (any header).
        case credential(Credential)
        /// Answer ``Credential/omitted``.
        case omitted
        /// Throw this error.
        case failure(any Error & Sendable)
    }

    /// One rejection the provider was told about.
    public struct Rejection: Sendable {
        /// The credential the server rejected.
        public let credential: Credential
        /// The response that rejected it.
        public let response: ServerResponse
        /// The request it was issued for.
        public let context: AuthorizationContext
    }

    private struct State {
        var steps: [Step]
        var contexts: [AuthorizationContext] = []
        var rejections: [Rejection] = []
        var identityChanges = 0
        var decision: RejectionDecision = .fail
    }

    private let state: TestingLock<State>

    /// Creates a provider that answers `steps` in order and repeats the last one afterwards.
    public convenience init(_ steps: Step...) {
        self.init(steps)
    }

    /// Creates a provider that answers `steps` in order and repeats the last one afterwards.
    public init(_ steps: [Step]) {
        state = TestingLock(State(steps: steps))
    }

    /// What ``credentialRejected(_:response:context:)`` answers (default ``RejectionDecision/fail``).
    public var rejectionDecision: RejectionDecision {
        get { state.withLock { $0.decision } }
        set { state.withLock { $0.decision = newValue } }
    }

    /// The contexts of every call to ``credential(for:)``.
    public var requestedContexts: [AuthorizationContext] { state.withLock { $0.contexts } }
    /// Every rejection reported, in order.
    public var rejections: [Rejection] { state.withLock { $0.rejections } }
    /// The secret values of the credentials reported as rejected.
    public var rejectedCredentials: [String] { rejections.compactMap(\.credential.value) }
    /// How many identity changes were reported.
    public var identityChangeCount: Int { state.withLock { $0.identityChanges } }

    public func credential(for context: AuthorizationContext) async throws -> Credential {
        let step = state.withLock { state -> Step? in
            state.contexts.append(context)
            return state.steps.count > 1 ? state.steps.removeFirst() : state.steps.first
        }
        switch step {
        case .token(let token)?: return .bearer(token)
        case .credential(let credential)?: return credential
        case .omitted?: return .omitted
        case .failure(let error)?: throw error
        case nil: return .omitted
        }
    }

    public func credentialRejected(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async -> RejectionDecision {
        state.withLock { state in
            state.rejections.append(Rejection(credential: credential, response: response, context: context))
            return state.decision
        }
    }

    public func identityDidChange() async {
        state.withLock { $0.identityChanges += 1 }
    }
}
