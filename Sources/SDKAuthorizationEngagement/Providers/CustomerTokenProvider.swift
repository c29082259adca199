import Dispatch
import SDKAuthorizationModeKit
import Foundation
import SDKAuthorization

/// Wraps a synchronous ``AuthorizationProviderType`` so the client can await it.
///
/// The wrapped provider is created and called only on a dedicated serial dispatch queue, never on
/// Swift's cooperative thread pool: a provider that blocks for a while holds up the requests that
/// need its token, and nothing else. Calls are made one at a time, in arrival order; the calls that
/// are waiting are answered in one turn of the queue, so many concurrent requests cost one hop to it,
/// not one each. It is asked for every request; a `nil` or empty answer fails that request with
/// `RequestError.Code.missingCustomerToken` (declared by this mode).
///
/// Cancellation is prompt: a request cancelled before its turn does not call the provider, and a
/// request cancelled (or past its deadline) while the provider is inside `getAuthorizationToken()`
/// returns at once; the provider's late answer is dropped, and the stuck call is reported through
/// diagnostics.
public final class CustomerTokenProvider: AuthorizationProvider, @unchecked Sendable, CustomStringConvertible, CustomReflectable {
    // `@unchecked Sendable` is sound: `provider` is created and read only inside `drain()`, which
    // runs only as a block on `queue`; `queue` is serial, so every access to the non-Sendable
    // instance happens on one thread at a time, in order. `calls` is a `Locked`; the other stored
    // properties are immutable and Sendable.
    private let queue: DispatchQueue
    private var provider: (any AuthorizationProviderType)?
    private let makeProvider: () -> any AuthorizationProviderType
    private let diagnostics: any DiagnosticsSink
    /// Where each call's deadline is set.
    private let alarms: Alarms
    /// The calls waiting for their turn, and the phase of every call: one lock per provider, none per request.
    private let calls = Locked(PendingCalls())
    /// The wrapped type's name, for diagnostics.
    public let providerTypeName: String

    /// Wraps a new instance of `type`, created on the provider's own queue on first use.
    ///
    /// - Parameters:
    ///   - type: The provider class.
    ///   - clock: The clock a request's deadline runs on.
    ///   - diagnostics: Where a call still running at its request's end is reported.
    public init(type: any AuthorizationProviderType.Type, clock: any AuthorizationClock = SystemClock(),
                diagnostics: any DiagnosticsSink = StandardErrorDiagnosticsSink.inDebugBuilds) {
        queue = DispatchQueue(label: "SDKAuthorization.CustomerTokenProvider.\(String(reflecting: type))")
        providerTypeName = String(reflecting: type)
        makeProvider = { type.init() }
        alarms = Alarms(clock: clock, keepsIdleDriver: true)
        self.diagnostics = diagnostics
    }

    /// The wrapped type's name; never the provider instance, which may hold a token.
    public var description: String { "CustomerTokenProvider(\(providerTypeName))" }

    public var customMirror: Mirror { Mirror(self, children: ["providerTypeName": providerTypeName], displayStyle: .class) }

    /// `true`: a request stops waiting for the provider class at its deadline or cancellation, even
    /// while the class's synchronous call still runs on its queue.
    public var endsByDeadline: Bool { true }

    public func credential(for context: AuthorizationContext) async throws -> Credential {
        let call = ProviderCall()
        // The request's deadline ends the wait, as a cancellation does.
        let alarm = context.deadline.map { deadline in
            alarms.schedule(at: deadline.uptime) { [self] in
                abandon(call, for: context, with: RequestError.deadlineExceeded(endpoint: context.endpoint, after: deadline.seconds), because: "which reached its deadline")
            }
        }
        defer { if let alarm { alarms.cancel(alarm) } }
        let token: String? = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String?, any Error>) in
                enqueue(call, continuation)
            }
        } onCancel: {
            abandon(call, for: context, with: CancellationError(), because: "which was cancelled")
        }
        guard let token, !token.isEmpty else { throw RequestError.missingCustomerToken(endpoint: context.endpoint) }
        return .bearer(token)
    }

    /// Ends the call's wait with `error`, and reports a provider still inside its call.
    private func abandon(_ call: ProviderCall, for context: AuthorizationContext, with error: any Error, because reason: String) {
        guard cancel(call, with: error) else { return }
        diagnostics.log(.warning, "getAuthorizationToken() of \(providerTypeName) is still running for \(context.requestName), \(reason); the request returns without waiting for it, and later requests queue behind it")
    }

    // MARK: One queue turn for every waiting call

    /// Queues `call`, and schedules one drain on the provider's queue unless one is scheduled or
    /// running already. A call cancelled before it got here is answered with `CancellationError`.
    private func enqueue(_ call: ProviderCall, _ continuation: CheckedContinuation<String?, any Error>) {
        let (queued, scheduleDrain) = calls.withLock { pending -> (Bool, Bool) in
            guard call.phase == .new else { return (false, false) }
            call.phase = .waiting
            call.continuation = continuation
            pending.waiting.append(call)
            guard !pending.draining else { return (true, false) }
            pending.draining = true
            return (true, true)
        }
        if !queued { continuation.resume(throwing: CancellationError()) }
        if scheduleDrain { queue.async { self.drain() } }
    }

    /// Runs on `queue`: takes every waiting call at once and asks the provider for each, one at a
    /// time, in arrival order; then the calls that arrived meanwhile, until none is left. A call
    /// cancelled before its turn does not reach the provider. Each answer is handed back as soon as
    /// its call returns (a later call may block, and must not hold up answers already made); the
    /// last one after the drain has ended, so that the request it wakes, if it asks again at once,
    /// schedules a new turn rather than racing this one's end.
    private func drain() {
        while true {
            let batch = calls.withLock { pending -> [ProviderCall] in
                var batch: [ProviderCall] = []
                swap(&batch, &pending.waiting)
                return batch
            }
            var last: (CheckedContinuation<String?, any Error>, String?)?
            for call in batch where begin(call) {
                if let (continuation, token) = last { continuation.resume(returning: token) }
                last = nil
                let provider = self.provider ?? makeProvider()
                self.provider = provider
                let token = provider.getAuthorizationToken()
                guard let continuation = finish(call) else {
                    diagnostics.log(.info, "getAuthorizationToken() of \(providerTypeName) returned after its request was cancelled; the answer was dropped")
                    continue
                }
                last = (continuation, token)
            }
            let ended = calls.withLock { pending -> Bool in
                guard pending.waiting.isEmpty else { return false }
                pending.draining = false
                return true
            }
            if let (continuation, token) = last { continuation.resume(returning: token) }
            if ended { return }
        }
    }

    /// Marks the call as started; false when it was cancelled before its turn.
    private func begin(_ call: ProviderCall) -> Bool {
        calls.withLock { _ in
            guard call.phase == .waiting else { return false }
            call.phase = .running
            return true
        }
    }

    /// Marks the call as answered and returns its continuation; nil when the answer came too late
    /// (the request was cancelled meanwhile).
    private func finish(_ call: ProviderCall) -> CheckedContinuation<String?, any Error>? {
        calls.withLock { _ -> CheckedContinuation<String?, any Error>? in
            guard call.phase == .running else { return nil }
            call.phase = .finished
            defer { call.continuation = nil }
            return call.continuation
        }
    }

    /// Ends the wait with `error`, exactly once; returns true when the provider was inside its
    /// call for it.
    private func cancel(_ call: ProviderCall, with error: any Error) -> Bool {
        let (continuation, wasRunning) = calls.withLock { _ -> (CheckedContinuation<String?, any Error>?, Bool) in
            switch call.phase {
            case .finished, .cancelled:
                return (nil, false)
            case .new, .waiting, .running:
                let wasRunning = call.phase == .running
                call.phase = .cancelled
                defer { call.continuation = nil }
                return (call.continuation, wasRunning)
            }
        }
        continuation?.resume(throwing: error)
        return wasRunning
    }
}

/// The calls of one provider that wait for their turn, and whether a drain is scheduled or running.
private struct PendingCalls {
    var waiting: [ProviderCall] = []
    var draining = false
}

/// One call to a synchronous provider: its continuation is resumed exactly once, by the answer or by
/// cancellation, whichever comes first.
private final class ProviderCall: @unchecked Sendable {
    // `@unchecked Sendable` is sound: `phase` and `continuation` are read and written only inside
    // `calls.withLock` of the one CustomerTokenProvider that made the call, so no two threads touch
    // them at once. The continuation is resumed only by whoever moves `phase` to `.finished` or
    // `.cancelled`, which happens once. It is checked rather than unsafe although that costs a canary
    // per call: the queue often answers before the request has suspended, and an unsafe
    // continuation's inlined resume then reads the request's frame in a way ThreadSanitizer cannot
    // order with the request's next frame at the same address (swiftlang/swift#57803); a checked
    // one resumes inside the runtime. (A lock per provider rather than an atomic per call: `Synchronization.Atomic`
    // needs macOS 15 / iOS 18, and the framework sets no minimum deployment target.)
    enum Phase { case new, waiting, running, finished, cancelled }

    var phase = Phase.new
    var continuation: CheckedContinuation<String?, any Error>?
}
