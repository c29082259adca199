import Dispatch
import Foundation

/// Wraps a synchronous ``AuthorizationProviderType`` so the client can await it.
///
/// The wrapped provider is created and called only on a dedicated serial dispatch queue, never on
/// Swift's cooperative thread pool: a provider that blocks for a while holds up the requests that
/// need its token, and nothing else. It is asked for every request; a `nil` or empty answer fails
/// that request with ``RequestError/Code/missingCustomerToken``.
///
/// Cancellation is prompt: a request cancelled before its turn does not call the provider, and a
/// request cancelled (or past its deadline) while the provider is inside `getAuthorizationToken()`
/// returns at once; the provider's late answer is dropped, and the stuck call is reported through
/// diagnostics.
public final class CustomerTokenProvider: AuthorizationProvider, @unchecked Sendable, CustomStringConvertible, CustomReflectable {
    // `@unchecked Sendable` is sound: `provider` is created inside `queue.async` and read only
    // inside later `queue.async` blocks; `queue` is serial, so every access to the non-Sendable
    // instance happens on one thread at a time, in order. The other stored properties are immutable
    // and Sendable.
    private let queue: DispatchQueue
    private var provider: (any AuthorizationProviderType)?
    private let makeProvider: () -> any AuthorizationProviderType
    private let diagnostics: any DiagnosticsSink
    /// The wrapped type's name, for diagnostics.
    public let providerTypeName: String

    /// Wraps a new instance of `type`, created on the provider's own queue on first use.
    public init(type: any AuthorizationProviderType.Type, diagnostics: any DiagnosticsSink = StandardErrorDiagnosticsSink()) {
        queue = DispatchQueue(label: "SDKAuthorization.CustomerTokenProvider.\(String(reflecting: type))")
        providerTypeName = String(reflecting: type)
        makeProvider = { type.init() }
        self.diagnostics = diagnostics
    }

    /// The wrapped type's name; never the provider instance, which may hold a token.
    public var description: String { "CustomerTokenProvider(\(providerTypeName))" }

    public var customMirror: Mirror { Mirror(self, children: ["providerTypeName": providerTypeName], displayStyle: .class) }

    public func credential(for context: AuthorizationContext) async throws -> Credential {
        let call = ProviderCall()
        let token: String? = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String?, any Error>) in
                guard call.attach(continuation) else { return }
                queue.async {
                    guard call.begin() else { return }
                    let provider = self.provider ?? self.makeProvider()
                    self.provider = provider
                    let token = provider.getAuthorizationToken()
                    if call.finish(token) {
                        self.diagnostics.log(.info, "getAuthorizationToken() of \(self.providerTypeName) returned after its request was cancelled; the answer was dropped")
                    }
                }
            }
        } onCancel: {
            if call.cancel() {
                diagnostics.log(.warning, "getAuthorizationToken() of \(providerTypeName) is still running for \(context.requestName), which was cancelled; the request returns without waiting for it, and later requests queue behind it")
            }
        }
        guard let token, !token.isEmpty else { throw RequestError.missingCustomerToken(endpoint: context.endpoint) }
        return .bearer(token)
    }
}

/// One call to a synchronous provider: the continuation is resumed exactly once, by the answer or
/// by cancellation, whichever comes first.
private final class ProviderCall: Sendable {
    private enum Phase { case waiting, running, finished, cancelled }
    private struct State {
        var continuation: CheckedContinuation<String?, any Error>?
        var phase = Phase.waiting
    }

    private let state = Locked(State())

    /// Keeps the continuation; false (and resumed) when the request was cancelled already.
    func attach(_ continuation: CheckedContinuation<String?, any Error>) -> Bool {
        let cancelled = state.withLock { state -> Bool in
            if state.phase == .cancelled { return true }
            state.continuation = continuation
            return false
        }
        if cancelled { continuation.resume(throwing: CancellationError()) }
        return !cancelled
    }

    /// Marks the provider call as started; false when the request was cancelled before its turn.
    func begin() -> Bool {
        state.withLock { state in
            guard state.phase == .waiting else { return false }
            state.phase = .running
            return true
        }
    }

    /// Delivers the answer; returns true when it came too late (the request was cancelled meanwhile).
    func finish(_ token: String?) -> Bool {
        let continuation = state.withLock { state -> CheckedContinuation<String?, any Error>? in
            guard state.phase == .running else { return nil }
            state.phase = .finished
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: token)
        return continuation == nil
    }

    /// Ends the wait with `CancellationError`; returns true when the provider was inside its call.
    func cancel() -> Bool {
        let (continuation, wasRunning) = state.withLock { state -> (CheckedContinuation<String?, any Error>?, Bool) in
            switch state.phase {
            case .finished, .cancelled:
                return (nil, false)
            case .waiting, .running:
                let wasRunning = state.phase == .running
                state.phase = .cancelled
                defer { state.continuation = nil }
                return (state.continuation, wasRunning)
            }
        }
        continuation?.resume(throwing: CancellationError())
        return wasRunning
    }
}
