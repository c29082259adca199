import Dispatch
import Foundation

/// The async refresh-callback mode (Rover style): the app sets and clears an ID token, and
/// registers a callback the framework invokes when a request needs a token and has none fresh.
///
/// Requests to hosts that match ``authorizedDomains`` carry `Authorization: Bearer <ID token>`;
/// other hosts never see it. A token is stale when its JWT `exp` is less than
/// ``Options/staleLeeway`` (60 s) away; a token whose `exp` cannot be read is kept. A request
/// that needs a token and finds none fresh waits up to ``Options/refreshTimeout`` (10 s) for
/// ``setIDToken(_:)``:
///
/// - Any number of concurrent waiters share **one** callback invocation, and all resume with the
///   token that is set, in the order they began waiting.
/// - A token set before the wait began satisfies it only if it is fresh.
/// - Cancelling one waiting request releases that one only.
/// - ``clearIDToken()`` (logout) during a wait fails the waiters with
///   ``RequestError/Code/credentialCleared``.
/// - A refresh callback that returns the token (``registerTokenRefresh(_:)``) and
///   throws ends every wait at once with ``RequestError/Code/refreshFailed``, carrying its error.
/// - On timeout the store logs ``timeoutMessage(after:)`` at warning level and, by default, sends the
///   request without the token, as Rover does; ``Options/TimeoutBehavior/fail`` fails it with
///   ``RequestError/Code/credentialTimedOut`` instead.
/// - Waits run on the clock's monotonic time: setting the system clock back does not stretch them.
///   Only the token's `exp` is compared with wall-clock time.
/// - A 401 from an authorized host marks the token stale; the client then retries that request
///   once, after a refresh.
///
/// ```swift
/// let idTokens = try IDTokenStore(authorizedDomains: ["*.rover.io"])
/// idTokens.registerTokenRefresh {
///     try await session.refreshIDToken()      // a thrown error fails the waiting requests at once
/// }
/// let client = try AuthorizedHTTPClient(configuration: configuration, provider: idTokens)
/// ```
public final class IDTokenStore: AuthorizationProvider, Sendable, CustomStringConvertible, CustomReflectable, AnswersWithinRequestDeadline {
    /// How the store waits and what a timeout does.
    public struct Options: Sendable, Equatable {
        /// What happens to a request whose wait for a token runs out.
        public enum TimeoutBehavior: Sendable, Equatable {
            /// Send the request without a token (Rover's behaviour).
            case sendWithoutToken
            /// Fail the request with ``RequestError/Code/credentialTimedOut``.
            case fail
        }

        /// How long a request waits for ``IDTokenStore/setIDToken(_:)``, in seconds (default 10).
        public var refreshTimeout: TimeInterval
        /// A token whose `exp` is less than this many seconds away is stale (default 60).
        public var staleLeeway: TimeInterval
        /// What a timeout does (default ``TimeoutBehavior/sendWithoutToken``).
        public var timeoutBehavior: TimeoutBehavior

        /// Creates options.
        public init(refreshTimeout: TimeInterval = 10, staleLeeway: TimeInterval = 60, timeoutBehavior: TimeoutBehavior = .sendWithoutToken) {
            self.refreshTimeout = refreshTimeout
            self.staleLeeway = staleLeeway
            self.timeoutBehavior = timeoutBehavior
        }
    }

    private enum Callback {
        case async(@Sendable () async -> Void)
        case sync(@Sendable () -> Void)
        case returningToken(@Sendable () async throws -> String)
    }

    private enum WaitOutcome: Sendable {
        case token(String)
        case timedOut
        case cleared
        case cancelled
        case refreshFailed(any Error)

        var eventOutcome: AuthorizationEvent.Outcome {
            switch self {
            case .token: .succeeded
            case .timedOut: .timedOut
            case .cleared: .cleared
            case .cancelled: .cancelled
            case .refreshFailed: .failed
            }
        }
    }

    /// Waiters taken out of the queue, each to be resumed once by whoever took them.
    private struct TakenWaiters {
        let waits: [Wait]
        let range: Range<Int>
        /// How many of them are waiting.
        let count: Int

        /// Each waiter's deadline and continuation, in arrival order.
        func forEach(_ body: (TimeInterval, UnsafeContinuation<WaitOutcome, Never>) -> Void) {
            for index in range {
                if case .waiting(let continuation) = waits[index].slot { body(waits[index].deadline, continuation) }
            }
        }
    }

    /// One wait: its deadline (monotonic seconds) and where it stands.
    private struct Wait {
        let deadline: TimeInterval
        var slot: Slot
    }

    /// One wait's place in the queue.
    private enum Slot {
        /// It has an ID and a deadline, and will register its continuation.
        case unregistered
        /// It was cancelled (or reached the request's deadline) before it registered.
        case cancelledBeforeRegistering
        /// Unsafe rather than checked (which allocates a canary per wait and checks each resume):
        /// exactly one resume is guaranteed by construction. A waiter is resumed only by whoever
        /// moved its slot out of `.waiting` (or `register`, which never stored it), under the lock.
        case waiting(UnsafeContinuation<WaitOutcome, Never>)
        /// Ended; dropped from the queue once every slot before it has ended too.
        case ended
    }

    /// The waits, in the order they began, numbered by wait ID (``NumberedQueue``). Deadlines are
    /// taken on the monotonic clock under the lock with one timeout, so this is also deadline
    /// order, and handing every waiter back in arrival order is one pass with no lookup.
    private struct WaitQueue {
        var queue = NumberedQueue<Wait>(firstNumber: 1)
        /// Waits in `.waiting`.
        var waitingCount = 0
        /// Waits in `.unregistered` or `.cancelledBeforeRegistering`.
        var unregisteredCount = 0
        /// Every wait with a smaller ID has ended, been timed out, or times itself out when it registers.
        var nextToExpire: UInt64 = 1

        mutating func append(deadline: TimeInterval) -> UInt64 {
            unregisteredCount += 1
            return queue.append(Wait(deadline: deadline, slot: .unregistered))
        }

        /// Ends the wait at `index` and returns its continuation, if it was waiting.
        mutating func end(at index: Int) -> UnsafeContinuation<WaitOutcome, Never>? {
            guard case .waiting(let continuation) = queue[index].slot else { return nil }
            queue[index].slot = .ended
            waitingCount -= 1
            return continuation
        }

        /// Drops the ended waits at the front.
        mutating func dropEnded() {
            queue.dropDone { if case .ended = $0.slot { true } else { false } }
            nextToExpire = max(nextToExpire, queue.frontNumber)
        }
    }

    private struct State {
        var token: String?
        var expiresAt: Date?
        var rejected = false
        var callback: Callback?
        /// Monotonic seconds.
        var refreshStartedAt: TimeInterval?
        var waits = WaitQueue()
        /// The one task that times waits out, sleeping until the earliest deadline.
        var timeoutDriver: Task<Void, Never>?
        var timeoutDriverGeneration = 0

        /// The token, when it is set, not rejected, and its `exp` (if readable) is at least `leeway` away.
        func freshToken(at now: Date, leeway: TimeInterval) -> String? {
            guard let token, !rejected else { return nil }
            if let expiresAt, expiresAt.timeIntervalSince(now) < leeway { return nil }
            return token
        }

        /// Installs a new token (or none), ends the refresh in progress, and hands back every waiter
        /// for the caller to resume outside the lock.
        mutating func replaceToken(with newToken: String?, expiresAt newExpiry: Date?) -> TakenWaiters {
            token = newToken
            expiresAt = newExpiry
            rejected = false
            refreshStartedAt = nil
            return takeAllWaiters()
        }

        /// Every waiter, in the order the waits began, for the caller to resume outside the lock;
        /// nothing waits afterwards. When no wait is between taking its ID and registering (the
        /// usual case), the queue's array is handed over whole; otherwise the waiting ones are
        /// copied out in one pass. No lookup, no sorting.
        mutating func takeAllWaiters() -> TakenWaiters {
            defer { stopTimeoutsIfIdle() }
            guard waits.unregisteredCount > 0 else {
                let count = waits.waitingCount
                let (taken, live) = waits.queue.takeAll()
                waits.waitingCount = 0
                waits.nextToExpire = max(waits.nextToExpire, waits.queue.frontNumber)
                return TakenWaiters(waits: taken, range: live, count: count)
            }
            var taken: [Wait] = []
            taken.reserveCapacity(waits.waitingCount)
            for index in waits.queue.liveIndices {
                let deadline = waits.queue[index].deadline
                if let continuation = waits.end(at: index) { taken.append(Wait(deadline: deadline, slot: .waiting(continuation))) }
            }
            waits.dropEnded()
            return TakenWaiters(waits: taken, range: taken.indices, count: taken.count)
        }

        /// Ends the refresh in progress when it has run out of time, and returns how long it ran.
        mutating func endRefreshIfTimedOut(at uptime: TimeInterval, timeout: TimeInterval) -> TimeInterval? {
            guard let started = refreshStartedAt, uptime - started >= timeout else { return nil }
            refreshStartedAt = nil
            return uptime - started
        }

        /// Stops the driver once nothing waits.
        mutating func stopTimeoutsIfIdle() {
            guard waits.waitingCount == 0 else { return }
            timeoutDriver?.cancel()
            timeoutDriver = nil
        }
    }

    /// The hosts that may receive the token.
    public let authorizedDomains: [AuthorizedDomain]
    /// The waiting and timeout options.
    public let options: Options

    private let clock: any AuthorizationClock
    private let diagnostics: any DiagnosticsSink
    /// Told when refreshes and waits start and end.
    private let observer: (any AuthorizationEventObserver)?
    private let credentialStore: (any CredentialStore)?
    private let credentialIdentity: String
    private let state = Locked(State())

    /// Creates a store.
    ///
    /// - Parameters:
    ///   - authorizedDomains: Host patterns (exact, or one leading `*.`); at least one.
    ///   - options: Timeout, staleness leeway (each 0 to 86400 seconds) and timeout behaviour.
    ///   - clock: The time source for staleness and the wait limit.
    ///   - diagnostics: Where the timeout line and warnings go.
    ///   - observer: Told when a refresh starts and finishes and when a request's wait starts and
    ///     ends (``AuthorizationEvent``); `nil`, the default, costs nothing.
    ///   - credentialStore: Opt-in: where the ID token is kept between launches, under
    ///     `credentialIdentity`, so a cold start has the last token without waiting for the app.
    ///     It is loaded here, saved by ``setIDToken(_:)`` and removed by ``clearIDToken()``.
    ///   - credentialIdentity: The store key (default `id-token`).
    /// - Throws: ``ConfigurationError/invalidValue(key:reason:)`` for a bad pattern, no pattern, or a
    ///   timeout or leeway that is negative or not finite.
    public init(
        authorizedDomains: [String],
        options: Options = Options(),
        clock: any AuthorizationClock = SystemClock(),
        diagnostics: any DiagnosticsSink = StandardErrorDiagnosticsSink(),
        observer: (any AuthorizationEventObserver)? = nil,
        credentialStore: (any CredentialStore)? = nil,
        credentialIdentity: String = "id-token"
    ) throws(ConfigurationError) {
        guard !authorizedDomains.isEmpty else {
            throw .invalidValue(key: "authorizedDomains", reason: "name at least one host that may receive the ID token")
        }
        var domains: [AuthorizedDomain] = []
        for pattern in authorizedDomains { domains.append(try AuthorizedDomain(pattern)) }
        guard options.refreshTimeout.isFinite, (0...AuthorizationConfiguration.maximumSeconds).contains(options.refreshTimeout) else {
            throw .invalidValue(key: "refreshTimeout", reason: "must be a number of seconds from 0 to 86400")
        }
        guard options.staleLeeway.isFinite, (0...AuthorizationConfiguration.maximumSeconds).contains(options.staleLeeway) else {
            throw .invalidValue(key: "staleLeeway", reason: "must be a number of seconds from 0 to 86400")
        }
        self.authorizedDomains = domains
        self.options = options
        self.clock = clock
        self.diagnostics = diagnostics
        self.observer = observer
        self.credentialStore = credentialStore
        self.credentialIdentity = credentialIdentity
        do {
            if let stored = try credentialStore?.load(identity: credentialIdentity), HeaderFieldRules.check(stored.token) == .valid {
                let expiresAt = try? JWTClaims(decoding: stored.token).expiresAt
                _ = state.withLock { $0.replaceToken(with: stored.token, expiresAt: expiresAt) }
            }
        } catch {
            diagnostics.log(.warning, "The stored ID token could not be read (\(RequestError.summary(of: error))); waiting for setIDToken")
        }
    }

    /// The domains, options and whether a token is set; never the token.
    public var description: String {
        "IDTokenStore(domains: \(authorizedDomains.map(\.description)), token: \(state.withLock { $0.token == nil } ? "none" : "set, redacted"), waiting: \(waitingRequestCount))"
    }

    public var customMirror: Mirror {
        Mirror(self, children: ["authorizedDomains": authorizedDomains.map(\.description), "options": options, "description": description], displayStyle: .class)
    }

    /// The stable line logged when a wait runs out: `setIDToken was not called within 10 seconds`,
    /// followed by what happens to the request.
    public static func timeoutMessage(after seconds: TimeInterval) -> String {
        let formatted = seconds == seconds.rounded() && abs(seconds) < 1e15 ? String(Int(seconds)) : String(seconds)
        return "setIDToken was not called within \(formatted) seconds"
    }

    // MARK: The app's side

    /// Sets the ID token (at login and after each refresh) and resumes every waiting request with it.
    ///
    /// - Throws: ``ConfigurationError/emptyCredential(field:)`` or
    ///   ``ConfigurationError/credentialContainsControlCharacters(field:)``; the current token is
    ///   then left as it was. To log out, call ``clearIDToken()``.
    public func setIDToken(_ token: String) throws(ConfigurationError) {
        switch HeaderFieldRules.check(token) {
        case .valid: break
        case .empty: throw .emptyCredential(field: "ID token")
        case .forbiddenCharacters: throw .credentialContainsControlCharacters(field: "ID token")
        }
        let expiresAt = try? JWTClaims(decoding: token).expiresAt
        let now = clock.now()
        let (waiters, uptime, refreshTook) = state.withLock { state -> (TakenWaiters, TimeInterval, TimeInterval?) in
            let uptime = clock.monotonicNow()
            let refreshTook = state.refreshStartedAt.map { uptime - $0 }
            return (state.replaceToken(with: token, expiresAt: expiresAt), uptime, refreshTook)
        }
        if let refreshTook { observer?.observe(AuthorizationEvent(.refreshFinished, duration: refreshTook, outcome: .succeeded)) }
        if let expiresAt, expiresAt.timeIntervalSince(now) < options.staleLeeway {
            diagnostics.log(.warning, "The ID token set expires within \(Int(options.staleLeeway)) seconds; requests will ask for a refresh again")
        }
        persist { try $0.save(StoredCredential(token: token, expiresAt: expiresAt), identity: credentialIdentity) }
        // In arrival order; a wait whose deadline had passed when the token came times out.
        waiters.forEach { deadline, continuation in continuation.resume(returning: uptime < deadline ? .token(token) : .timedOut) }
    }

    /// Forgets the token (logout). Requests waiting for a token fail with
    /// ``RequestError/Code/credentialCleared``.
    public func clearIDToken() {
        let (waiters, refreshTook) = state.withLock { state -> (TakenWaiters, TimeInterval?) in
            let refreshTook = state.refreshStartedAt.map { clock.monotonicNow() - $0 }
            return (state.replaceToken(with: nil, expiresAt: nil), refreshTook)
        }
        if let refreshTook { observer?.observe(AuthorizationEvent(.refreshFinished, duration: refreshTook, outcome: .cleared)) }
        persist { try $0.remove(identity: credentialIdentity) }
        waiters.forEach { _, continuation in continuation.resume(returning: .cleared) }
    }

    /// Runs `change` on the credential store, if any; a failure is logged, never thrown.
    private func persist(_ change: (any CredentialStore) throws -> Void) {
        guard let credentialStore else { return }
        do {
            try change(credentialStore)
        } catch {
            diagnostics.log(.warning, "The ID token store could not be updated (\(RequestError.summary(of: error)))")
        }
    }

    /// Registers the callback invoked when requests need a new token. It should lead to
    /// ``setIDToken(_:)``. It runs in its own task, once for any number of waiting requests.
    public func registerRefreshCallback(_ callback: @escaping @Sendable () async -> Void) {
        state.withLock { $0.callback = .async(callback) }
    }

    /// Registers a callback that fetches the new token and returns it; the store sets it.
    ///
    /// It runs in its own task, once for any number of waiting requests. When it throws (or returns
    /// a token ``setIDToken(_:)`` refuses), every waiting request fails at once with
    /// ``RequestError/Code/refreshFailed`` carrying the error, instead of waiting out the timeout;
    /// the next request that needs a token asks again.
    public func registerTokenRefresh(_ callback: @escaping @Sendable () async throws -> String) {
        state.withLock { $0.callback = .returningToken(callback) }
    }

    /// Registers a plain closure as the refresh callback. It runs on a global dispatch queue, once
    /// for any number of waiting requests.
    public func registerRefreshCallback(synchronous callback: @escaping @Sendable () -> Void) {
        state.withLock { $0.callback = .sync(callback) }
    }

    /// The current token, if any (fresh or not).
    public var currentToken: String? { state.withLock { $0.token } }

    /// How many requests are waiting for a token now.
    public var waitingRequestCount: Int { state.withLock { $0.waits.waitingCount } }

    /// Waits and wait IDs still held; zero when nothing waits (for leak tests).
    var heldWaitRecords: Int {
        state.withLock { $0.waits.queue.entries.count + ($0.timeoutDriver == nil ? 0 : 1) }
    }

    // MARK: AuthorizationProvider

    public func credential(for context: AuthorizationContext) async throws -> Credential {
        // The work before and after the wait is in plain functions: the frame that stays allocated
        // while a request waits holds little more than the context, which matters at 100,000 waiters.
        if let credential = credentialWithoutWaiting(for: context) { return credential }
        let (id, deadline, waitStartedAt) = beginWait(context)
        let outcome = await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<WaitOutcome, Never>) in
                register(id, deadline: deadline, continuation: continuation)
            }
        } onCancel: {
            resolve(id, with: .cancelled)
        }
        return try credential(after: outcome, for: context, waitStartedAt: waitStartedAt)
    }

    /// Reports the wait to the observer, if any, and gives it an ID and its deadline.
    @inline(never)
    private func beginWait(_ context: AuthorizationContext) -> (id: UInt64, deadline: TimeInterval, startedAt: TimeInterval?) {
        let startedAt = waitStarted(context)
        let (id, deadline) = state.withLock { state -> (UInt64, TimeInterval) in
            let deadline = clock.monotonicNow() + options.refreshTimeout
            return (state.waits.append(deadline: deadline), deadline)
        }
        // Asked in the caller's task by the client: the request's deadline ends the wait as a
        // cancellation would (the client reports it as deadlineExceeded).
        context.requestDeadline?.onExpiry { [self] in resolve(id, with: .cancelled) }
        return (id, deadline, startedAt)
    }

    /// `.omitted` for a host outside the authorized domains, the fresh token if there is one, or nil
    /// when the request must wait.
    @inline(never)
    private func credentialWithoutWaiting(for context: AuthorizationContext) -> Credential? {
        guard let host = context.url.host, authorizedDomains.contains(where: { $0.matches(host) }) else {
            return .omitted
        }
        let now = clock.now()
        return state.withLock { $0.freshToken(at: now, leeway: options.staleLeeway) }.map { .bearer($0) }
    }

    /// Reports the wait to the observer, if any, and returns when it began.
    private func waitStarted(_ context: AuthorizationContext) -> TimeInterval? {
        observer.map { observer in
            observer.observe(AuthorizationEvent(.waitStarted, endpoint: context.endpoint))
            return clock.monotonicNow()
        }
    }

    /// What a wait's outcome means for the request.
    @inline(never)
    private func credential(after outcome: WaitOutcome, for context: AuthorizationContext, waitStartedAt: TimeInterval?) throws -> Credential {
        if let observer, let waitStartedAt {
            observer.observe(AuthorizationEvent(.waitEnded, endpoint: context.endpoint, duration: clock.monotonicNow() - waitStartedAt, outcome: outcome.eventOutcome))
        }
        switch outcome {
        case .token(let token):
            return .bearer(token)
        case .timedOut:
            switch options.timeoutBehavior {
            case .sendWithoutToken:
                diagnostics.log(.warning, "\(Self.timeoutMessage(after: options.refreshTimeout)); sending \(context.requestName) without the ID token",
                                endpoint: context.endpoint, scheme: context.scheme, event: AuthorizationEvent.Kind.waitEnded.rawValue)
                return .omitted
            case .fail:
                diagnostics.log(.warning, "\(Self.timeoutMessage(after: options.refreshTimeout)); failing \(context.requestName)",
                                endpoint: context.endpoint, scheme: context.scheme, event: RequestError.Code.credentialTimedOut.rawValue)
                throw RequestError.credentialTimedOut(endpoint: context.endpoint, after: options.refreshTimeout)
            }
        case .cleared:
            throw RequestError.credentialCleared(endpoint: context.endpoint)
        case .cancelled:
            throw CancellationError()
        case .refreshFailed(let error):
            throw RequestError.refreshFailed(error, endpoint: context.endpoint)
        }
    }

    /// A 401 from an authorized host marks the rejected token stale and asks for one retry; any other
    /// rejection fails the request.
    public func credentialRejected(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async -> RejectionDecision {
        guard response.statusCode == 401, let host = context.url.host, authorizedDomains.contains(where: { $0.matches(host) }) else {
            return .fail
        }
        state.withLock { state in
            if let value = credential.value, state.token == value { state.rejected = true }
        }
        return .retry
    }

    /// The user changed: the old user's token is forgotten, as by ``clearIDToken()``.
    public func identityDidChange() async {
        clearIDToken()
    }

    // MARK: Waiting


    /// The driver: sleeps until the earliest deadline, times out every wait that has reached its
    /// deadline, and repeats until nothing waits.
    private func runTimeouts(generation: Int) async {
        while true {
            let next = state.withLock { state -> TimeInterval? in
                guard state.timeoutDriverGeneration == generation else { return nil }
                // The earliest deadline of a wait that is waiting; one not registered yet times itself
                // out when it registers.
                var id = state.waits.nextToExpire
                while let index = state.waits.queue.index(of: id) {
                    switch state.waits.queue[index].slot {
                    case .waiting:
                        return state.waits.queue[index].deadline
                    case .ended:
                        // Nothing to time out there; a wait not registered yet keeps its place.
                        if id == state.waits.nextToExpire { state.waits.nextToExpire += 1 }
                    case .unregistered, .cancelledBeforeRegistering:
                        break
                    }
                    id += 1
                }
                state.timeoutDriver = nil
                return nil
            }
            guard let next else { return }
            do {
                try await clock.sleep(untilMonotonic: next)
            } catch {
                return // cancelled: nothing waits any more
            }
            let (expired, refreshTook) = state.withLock { state -> ([UnsafeContinuation<WaitOutcome, Never>], TimeInterval?) in
                guard state.timeoutDriverGeneration == generation else { return ([], nil) }
                let now = clock.monotonicNow()
                var expired: [UnsafeContinuation<WaitOutcome, Never>] = []
                var id = state.waits.nextToExpire
                while let index = state.waits.queue.index(of: id), state.waits.queue[index].deadline <= now {
                    if let continuation = state.waits.end(at: index) { expired.append(continuation) }
                    id += 1
                }
                state.waits.nextToExpire = id
                state.waits.dropEnded()
                return (expired, state.endRefreshIfTimedOut(at: now, timeout: options.refreshTimeout))
            }
            if let refreshTook { observer?.observe(AuthorizationEvent(.refreshFinished, duration: refreshTook, outcome: .timedOut)) }
            for continuation in expired { continuation.resume(returning: .timedOut) }
        }
    }

    private func register(_ id: UInt64, deadline: TimeInterval, continuation: UnsafeContinuation<WaitOutcome, Never>) {
        enum Next {
            /// The wait ends at once with this outcome.
            case resume(WaitOutcome)
            /// A refresh is already running; this wait shares it.
            case joinRefresh
            /// This wait starts a refresh: invoke the callback, or report that none is registered.
            /// The refresh before it, when it ran out of time, took this long.
            case startRefresh(Callback?, timedOutRefreshTook: TimeInterval?)
        }
        let next = state.withLock { state -> Next in
            // Read the clock under the lock, so a deadline the clock has already passed is seen here.
            let uptime = clock.monotonicNow()
            // The slot is there: a slot is dropped only once it has ended, and only this call ends
            // an unregistered one.
            guard let index = state.waits.queue.index(of: id) else { return .resume(.cancelled) }
            let cancelled = if case .cancelledBeforeRegistering = state.waits.queue[index].slot { true } else { false }
            state.waits.queue[index].slot = .ended
            state.waits.unregisteredCount -= 1
            if cancelled { state.waits.dropEnded(); return .resume(.cancelled) }
            if uptime >= deadline { state.waits.dropEnded(); return .resume(.timedOut) }
            // A token that became fresh since the request looked (set by another thread) serves it.
            if let token = state.freshToken(at: clock.now(), leeway: options.staleLeeway) { state.waits.dropEnded(); return .resume(.token(token)) }
            state.waits.queue[index].slot = .waiting(continuation)
            state.waits.waitingCount += 1
            if state.timeoutDriver == nil {
                state.timeoutDriverGeneration += 1
                let generation = state.timeoutDriverGeneration
                state.timeoutDriver = Task { await self.runTimeouts(generation: generation) }
            }
            // One callback per refresh: a new one only when none is running or the last ran out of time.
            if let started = state.refreshStartedAt, uptime - started < options.refreshTimeout {
                return .joinRefresh
            }
            let timedOutRefreshTook = state.endRefreshIfTimedOut(at: uptime, timeout: options.refreshTimeout)
            state.refreshStartedAt = uptime
            return .startRefresh(state.callback, timedOutRefreshTook: timedOutRefreshTook)
        }
        if case .startRefresh(_, let timedOutRefreshTook) = next, let observer {
            if let timedOutRefreshTook { observer.observe(AuthorizationEvent(.refreshFinished, duration: timedOutRefreshTook, outcome: .timedOut)) }
            observer.observe(AuthorizationEvent(.refreshStarted))
        }
        switch next {
        case .resume(let outcome):
            continuation.resume(returning: outcome)
        case .joinRefresh:
            break
        case .startRefresh(.async(let callback)?, _):
            Task { await callback() }
        case .startRefresh(.sync(let callback)?, _):
            DispatchQueue.global().async { callback() }
        case .startRefresh(.returningToken(let callback)?, _):
            Task {
                do {
                    let token = try await callback()
                    try self.setIDToken(token)
                } catch {
                    self.failRefresh(error)
                }
            }
        case .startRefresh(nil, _):
            diagnostics.log(.warning, "A request needs an ID token but no refresh callback is registered; waiting for setIDToken")
        }
    }

    /// Ends every wait with the refresh callback's error, at once.
    private func failRefresh(_ error: any Error) {
        let (waiters, refreshTook) = state.withLock { state -> (TakenWaiters, TimeInterval?) in
            let refreshTook = state.refreshStartedAt.map { clock.monotonicNow() - $0 }
            state.refreshStartedAt = nil
            return (state.takeAllWaiters(), refreshTook)
        }
        if let refreshTook { observer?.observe(AuthorizationEvent(.refreshFinished, duration: refreshTook, outcome: .failed)) }
        diagnostics.log(.warning, "The ID token refresh callback failed (\(RequestError.summary(of: error))); \(waiters.count) waiting requests fail now",
                        event: AuthorizationEvent.Kind.refreshFinished.rawValue)
        waiters.forEach { _, continuation in continuation.resume(returning: .refreshFailed(error)) }
    }

    /// Ends one wait, once: whichever of token, timeout, clear or cancellation comes first wins.
    private func resolve(_ id: UInt64, with outcome: WaitOutcome) {
        let continuation = state.withLock { state -> UnsafeContinuation<WaitOutcome, Never>? in
            guard let index = state.waits.queue.index(of: id) else { return nil }
            if case .unregistered = state.waits.queue[index].slot {
                if case .cancelled = outcome { state.waits.queue[index].slot = .cancelledBeforeRegistering }
                return nil
            }
            guard let continuation = state.waits.end(at: index) else { return nil }
            state.waits.dropEnded()
            state.stopTimeoutsIfIdle()
            return continuation
        }
        continuation?.resume(returning: outcome)
    }
}
