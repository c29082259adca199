import Foundation
import SDKAuthorization

/// The whole life of a credential that must be fetched, in one place: a provider built on it says
/// only how to fetch a credential, when one is fresh, and how it goes on a request.
///
/// ```swift
/// final class SessionProvider: AuthorizationProvider {
///     private let session = CredentialRefresher<String>(isFresh: { _ in true }, credential: { .bearer($0) })
///
///     func credential(for context: AuthorizationContext) async throws -> Credential {
///         try await session.credential(for: context) { refresh in
///             try await api.newSessionToken(replacing: refresh.replacing)
///         }
///     }
///
///     func credentialRejected(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async -> RejectionDecision {
///         session.rejected(credential, response: response)
///     }
///
///     func identityDidChange() async { session.clear() }
///     var endsByDeadline: Bool { true }
/// }
/// ```
///
/// What it guarantees, whatever wraps the provider (an app's decorator that forwards only
/// `credential(for:)` and `credentialRejected`) and however many clients share it:
/// - **One fetch for any number of waiters.** A request that finds no fresh credential waits; the
///   first one starts the fetch, the others join it, and all resume with its credential in the order
///   they began waiting.
/// - **Every fetch admitted by the refresh window**, whatever started it (no credential yet, an
///   expiry, a rejection): the authorizer's `AuthorizationOptions.RefreshWindow` and this refresher's own count of the
///   same window, so a provider shared by several clients refreshes no more than one window allows.
///   Past it, the requests fail with `RequestError.Code.refreshWindowExceeded`.
/// - **Each wait ends on its own** at its request's deadline (`deadlineExceeded`), its cancellation,
///   or ``Options/waitLimit`` (`credentialTimedOut`); a fetch that runs past ``Options/timeout``
///   fails its waiters with `credentialTimedOut` (or the mode's own error). A fetch whose requests
///   have all left is cancelled, and while it still runs the next requests wait for it instead of
///   starting a second one.
/// - **Logout wins.** ``clear(updating:thenRemove:)`` fails the waiting requests with
///   `credentialCleared` and drops what a fetch returns late. A request sent before it and rejected
///   after it fails as cleared: nothing is fetched for it, and it is never sent again with a
///   credential fetched after the logout.
/// - **A rejection is the provider's to name** (``Options/rejectionStatuses``): it marks the
///   credential stale, asks for one retry, and the fetch that follows is told the server's answer.
/// - **A fetch that sends through the client it fetches for** never waits for itself: that request
///   fails at once with `RequestError.Code.refreshWaitsForItself`.
///
/// One lock guards the credential, the fetch and the waiters; continuations resume outside it.
public final class CredentialRefresher<Value: Sendable>: Credential.Issuer, Sendable {
    /// Why a fetch is asked for, and what it replaces: what the fetch function receives.
    public struct Refresh: Sendable, CustomStringConvertible {
        /// Why a fetch is asked for.
        public enum Reason: String, Sendable, Equatable {
            /// There is no credential (none yet, or after a logout).
            case noCredential
            /// The credential is no longer fresh (it expires soon, or has expired).
            case expiring
            /// The server rejected it (a status of ``Options/rejectionStatuses``).
            case rejected
        }

        /// Why the fetch is asked for.
        public let reason: Reason
        /// The value the fetch replaces; `nil` for ``Reason/noCredential``.
        public let replacing: Value?
        /// The server's answer that rejected it, for ``Reason/rejected`` (status, header fields such
        /// as `WWW-Authenticate`, body).
        public let rejection: ServerResponse?
        /// The generation the fetch belongs to.
        let generation: UInt64
        let flights: SingleFlight<Entry>

        /// Runs `save` (storing what the fetch got, say) only while no logout or identity change
        /// came since the fetch began, and never after the removal a logout runs: call it before
        /// returning the value, so a request that resumes with it finds it stored.
        public func persist(_ save: () -> Void) {
            flights.persist(save, generation: generation)
        }

        /// Runs `body` under the refresher's lock only while no logout or identity change came since
        /// the fetch began, so what a logout resets (a backoff, say) is never changed for the
        /// generation it ended. `body` must not call back into the refresher.
        public func whileCurrent(_ body: () -> Void) {
            _ = flights.modify(ifGeneration: generation) { _ in body() }
        }

        /// The reason and the rejection's status; never the value.
        public var description: String {
            "Refresh(\(reason.rawValue)\(rejection.map { ", HTTP \($0.statusCode)" } ?? ""))"
        }
    }

    /// What the requests get when a fetch throws.
    public enum Failures: Sendable, Equatable {
        /// Every error fails them as `RequestError.Code.refreshFailed` carrying it: the fetch is the
        /// app's own function, whose errors are about its own requests, not the waiting ones.
        case refreshFailed
        /// A `RequestError` reaches them as it is (with their endpoint): the mode's own errors;
        /// any other error as `refreshFailed`.
        case asThrown
    }

    /// Time limits, rejections and failures.
    public struct Options: Sendable {
        /// Seconds a fetch may run: after it, its waiters fail with ``timeoutError`` (when there is
        /// one), and the next request that needs a value starts a new fetch; `nil`, no limit.
        public var timeout: TimeInterval?
        /// Seconds each request waits at most, from when it began waiting; past it the request fails
        /// with `RequestError.Code.credentialTimedOut`. `nil`, until its deadline only.
        public var waitLimit: TimeInterval?
        /// The statuses that mean "this credential is no longer good" (`[401]` by default; add 403
        /// for a server that answers an expired token with it): ``rejected(_:response:marked:)`` marks it
        /// stale and asks for one retry; another status fails the request.
        public var rejectionStatuses: Set<Int>
        /// What the requests get when a fetch throws.
        public var failures: Failures
        /// Cancel a fetch once every request waiting for it has left (default `true`). `false` for a
        /// fetch that only asks the app, which answers with ``set(_:persist:)`` later.
        public var cancelsUnwatchedFetch: Bool
        /// Send a request's first attempt without the credential, and the credential only on the
        /// retry after a rejection (``rejectionStatuses``) that carries a `WWW-Authenticate`
        /// challenge (Ktor's `sendWithoutRequest = false`): `credential(for:fetch:)` answers
        /// `Credential.untilChallenged` then. Default `false`.
        public var sendsOnlyWhenChallenged: Bool
        /// Count each fetch in the refresh window (default `true`). `false` only for a fetch that
        /// asks another provider, which counts its own refreshes (a cache in front of it).
        public var countsInRefreshWindow: Bool
        /// What a fetch is called in logs ("token refresh").
        public var name: String
        /// What the waiters of a fetch past ``timeout`` fail with, given the timeout; `nil` leaves
        /// them waiting until their own limits (``waitLimit``, their deadline).
        public var timeoutError: (@Sendable (TimeInterval) -> RequestError)?

        /// Creates options.
        ///
        /// - Parameters:
        ///   - timeout: ``timeout``.
        ///   - waitLimit: ``waitLimit``.
        ///   - rejectionStatuses: ``rejectionStatuses``.
        ///   - failures: ``failures``.
        ///   - cancelsUnwatchedFetch: ``cancelsUnwatchedFetch``.
        ///   - sendsOnlyWhenChallenged: ``sendsOnlyWhenChallenged``.
        ///   - countsInRefreshWindow: ``countsInRefreshWindow``.
        ///   - name: ``name``.
        ///   - timeoutError: ``timeoutError``; by default `RequestError.Code.credentialTimedOut`.
        public init(timeout: TimeInterval? = nil, waitLimit: TimeInterval? = nil, rejectionStatuses: Set<Int> = [401],
                    failures: Failures = .asThrown, cancelsUnwatchedFetch: Bool = true, sendsOnlyWhenChallenged: Bool = false,
                    countsInRefreshWindow: Bool = true,
                    name: String = "token refresh",
                    timeoutError: (@Sendable (TimeInterval) -> RequestError)? = { RequestError.credentialTimedOut(endpoint: nil, after: $0) }) {
            self.timeout = timeout
            self.waitLimit = waitLimit
            self.rejectionStatuses = rejectionStatuses
            self.failures = failures
            self.cancelsUnwatchedFetch = cancelsUnwatchedFetch
            self.sendsOnlyWhenChallenged = sendsOnlyWhenChallenged
            self.countsInRefreshWindow = countsInRefreshWindow
            self.name = name
            self.timeoutError = timeoutError
        }
    }

    /// A value, the fingerprint of its credential (`Credential.secretFingerprint`, hashed once,
    /// when it arrives, not on every request), and the server's answer that rejected it once one did.
    ///
    /// A class: every waiting request's frames hold an outcome that carries one, and a pointer keeps
    /// them small (bytes per waiter in "3 waiters: N on IDTokenStore vs gates"); one is made per
    /// value, not per request.
    final class Entry: Sendable {
        let value: Value
        let fingerprint: Int
        let rejection: ServerResponse?

        init(_ value: Value, credential: (Value) -> Credential) {
            self.value = value
            self.fingerprint = credential(value).secretFingerprint
            self.rejection = nil
        }

        private init(_ value: Value, fingerprint: Int, rejection: ServerResponse) {
            self.value = value
            self.fingerprint = fingerprint
            self.rejection = rejection
        }

        /// The same value, rejected by `response`.
        func rejected(by response: ServerResponse) -> Entry {
            Entry(value, fingerprint: fingerprint, rejection: response)
        }
    }

    /// The generation each of the latest credentials handed out was issued in, by the credential's
    /// fingerprint (never the credential): a rejection of one issued before the last logout is
    /// refused here, so no decorator in between can turn a logout into a refresh.
    private struct IssuedGenerations {
        /// A request's credential is forgotten only once 32 newer ones were handed out while it was
        /// in flight; a rejection of a forgotten one is answered as before (the request still
        /// carries the generation it was issued in, `AuthorizationContext.noteIssued(by:generation:)`).
        static var limit: Int { 32 }
        private var entries: [(fingerprint: Int, generation: UInt64)] = []

        mutating func note(_ fingerprint: Int, generation: UInt64) {
            if entries.last?.fingerprint == fingerprint, entries.last?.generation == generation { return }
            entries.removeAll { $0.fingerprint == fingerprint }
            entries.append((fingerprint, generation))
            if entries.count > Self.limit { entries.removeFirst() }
        }

        func generation(of fingerprint: Int) -> UInt64? {
            entries.last { $0.fingerprint == fingerprint }?.generation
        }
    }

    /// The options in force.
    public let options: Options
    private let clock: any AuthorizationClock
    private let diagnostics: any DiagnosticsSink
    private let observer: (any AuthorizationEventObserver)?
    private let isFresh: @Sendable (Value) -> Bool
    private let credentialOf: @Sendable (Value) -> Credential
    private let flights: SingleFlight<Entry>
    private let issued = Locked(IssuedGenerations())

    /// Creates a refresher.
    ///
    /// - Parameters:
    ///   - value: The value to begin with (a stored credential, one set at login), or `nil`.
    ///   - options: Time limits, rejection statuses, failures.
    ///   - clock: Monotonic time for the limits; whatever `isFresh` reads.
    ///   - diagnostics: Where failed and late fetches are reported.
    ///   - observer: Told when fetches and waits start and end (`AuthorizationEvent`); `nil` costs nothing.
    ///   - isFresh: Whether a value may still be used. Runs under the refresher's lock: keep it
    ///     short, and never call back into the refresher.
    ///   - credential: The credential a value puts on a request (its header; per-request fields are
    ///     the provider's to add), also what a rejection is matched against.
    /// - Throws: `ConfigurationError.invalidValue(key:reason:)` naming `timeout` or `waitLimit` for a
    ///   time that is negative, not finite or longer than a day, or `rejectionStatuses` for statuses
    ///   that are not 401, 403 or both (a provider is asked about no other answer).
    public convenience init(value: Value? = nil, options: Options = Options(), clock: any AuthorizationClock = SystemClock(),
                            diagnostics: any DiagnosticsSink = StandardErrorDiagnosticsSink.inDebugBuilds,
                            observer: (any AuthorizationEventObserver)? = nil,
                            isFresh: @escaping @Sendable (Value) -> Bool,
                            credential: @escaping @Sendable (Value) -> Credential) throws(ConfigurationError) {
        for (key, seconds) in [("timeout", options.timeout), ("waitLimit", options.waitLimit)] {
            guard let seconds else { continue }
            guard seconds.isFinite, (0...AuthorizationOptions.maximumSeconds).contains(seconds) else {
                throw .invalidValue(key: key, reason: "must be a number of seconds from 0 to 86400, or nil for no limit")
            }
        }
        guard !options.rejectionStatuses.isEmpty, options.rejectionStatuses.isSubset(of: [401, 403]) else {
            let given = options.rejectionStatuses.sorted().prefix(8).map(String.init).joined(separator: ", ")
            throw .invalidValue(key: "rejectionStatuses", reason: "must be 401, 403 or both: a provider is asked only about those answers (\(given.isEmpty ? "none" : given) given)")
        }
        self.init(checked: options, value: value, clock: clock, diagnostics: diagnostics, observer: observer, isFresh: isFresh, credential: credential)
    }

    /// ``init(value:options:clock:diagnostics:observer:isFresh:credential:)`` for options already
    /// checked: the kit's own constant ones (the cache's).
    init(checked options: Options, value: Value? = nil, clock: any AuthorizationClock,
         diagnostics: any DiagnosticsSink = StandardErrorDiagnosticsSink.inDebugBuilds, observer: (any AuthorizationEventObserver)? = nil,
         isFresh: @escaping @Sendable (Value) -> Bool, credential: @escaping @Sendable (Value) -> Credential) {
        self.options = options
        self.clock = clock
        self.diagnostics = diagnostics
        self.observer = observer
        self.isFresh = isFresh
        self.credentialOf = credential
        var flightTimeoutError: (@Sendable () -> any Error)?
        if let timeout = options.timeout, let timeoutError = options.timeoutError {
            flightTimeoutError = { timeoutError(timeout) }
        }
        var flightEnded: (@Sendable (SingleFlight<Entry>.FlightEnd, TimeInterval) -> Void)?
        if let observer {
            flightEnded = { end, age in
                let outcome: AuthorizationEvent.Outcome? = switch end {
                case .succeeded: .succeeded
                case .failed: .failed
                case .timedOut: .timedOut
                case .cleared: .cleared
                case .abandoned: nil
                }
                if let outcome { observer.observe(AuthorizationEvent(.refreshFinished, duration: age, outcome: outcome)) }
            }
        }
        self.flights = SingleFlight(clock: clock, configuration: .init(
            flightLifetime: options.timeout,
            flightTimeoutError: flightTimeoutError,
            abandonsUnwatchedFlights: options.cancelsUnwatchedFetch,
            // A fetch that ignores cancellation still counts as running until it returns: the
            // requests that come meanwhile wait for it, never start a second one.
            waitsForAbandonedWork: options.cancelsUnwatchedFetch,
            flightEnded: flightEnded
        ), value: value.map { Entry($0, credential: credential) })
    }

    // MARK: Reading

    /// The current value, fresh or not, rejected or not.
    public var current: Value? { flights.current?.value }

    /// The current value when it has not been rejected and `isUsable` accepts it (under the lock:
    /// keep it short).
    public func current(where isUsable: (Value) -> Bool) -> Value? {
        flights.usableValue { $0.rejection == nil && isUsable($0.value) }?.value
    }

    /// The current generation: every ``clear(updating:thenRemove:)`` starts a new one.
    public var credentialGeneration: UInt64 { flights.generation }

    /// How many requests wait now.
    public var waitingCount: Int { flights.waitingCount }

    /// Waits and alarms still held; zero when nothing waits (for a mode's leak tests).
    public var heldRecords: Int { flights.heldRecords }

    // MARK: A request's credential

    /// The credential for `context`'s request: the current value's when it is fresh; otherwise the
    /// one `fetch` gets, waiting for it (see ``value(for:fetch:)``). With
    /// ``Options/sendsOnlyWhenChallenged``, a first attempt gets `Credential.untilChallenged`
    /// instead, and nothing is fetched for it.
    public func credential(for context: AuthorizationContext,
                           fetch: @escaping @Sendable (Refresh) async throws -> Value?) async throws -> Credential {
        if options.sendsOnlyWhenChallenged, context.attempt == 1 { return .untilChallenged }
        return credentialOf(try await value(for: context, fetch: fetch))
    }

    /// The value for `context`'s request: the current one when it is fresh and not rejected;
    /// otherwise it waits for the fetch that runs, or starts one with `fetch`.
    ///
    /// `fetch` runs in a task of its own, once for any number of waiting requests, after the
    /// refresh window admitted it; it is cancelled when every request waiting for it has left
    /// (unless ``Options/cancelsUnwatchedFetch`` is `false`). It returns the new value, or `nil` when
    /// the value comes later through ``set(_:persist:)`` (a callback that asks the app).
    ///
    /// - Throws: `CancellationError` when its task is cancelled; otherwise `RequestError`:
    ///   `credentialCleared` (a logout while it waited, or since the request it retries was sent),
    ///   `deadlineExceeded`, `credentialTimedOut`,
    ///   `refreshWindowExceeded`, `refreshWaitsForItself`, or what the fetch threw
    ///   (``Options/failures``).
    public func value(for context: AuthorizationContext,
                      fetch: @escaping @Sendable (Refresh) async throws -> Value?) async throws -> Value {
        // A retry is served only in the generation its credential was issued in.
        let required = context.requiredGeneration(for: self)
        // model: wait (the fast path: a usable value, or cleared for an old generation)
        let (found, current) = flights.fastValue(generation: required, isUsable: isUsable)
        // Read before waiting: a logout during the wait makes the value older than this, never newer.
        let generation = required ?? current
        let outcome = if let found {
            found
        } else {
            await waited(for: context, generation: required, fetch: fetch)
        }
        return try served(outcome, to: context, generation: generation)
    }

    private func isUsable(_ entry: Entry) -> Bool {
        entry.rejection == nil && isFresh(entry.value)
    }

    /// The wait, apart from ``value(for:fetch:)``: only a waiting request's frames hold its state
    /// (bytes per waiter in "3 waiters: N on IDTokenStore vs gates").
    @inline(never)
    private func waited(for context: AuthorizationContext, generation required: UInt64?,
                        fetch: @escaping @Sendable (Refresh) async throws -> Value?) async -> SingleFlight<Entry>.Outcome {
        let started = observer.map { observeWaitStarted($0, context) }
        // Only the gate is held by the fetch's start, not the whole context.
        let window = context.refreshWindow
        let outcome = await flights.wait(deadline: context.deadline, waitLimit: options.waitLimit, generation: required,
                                         isUsable: isUsable, join: .wait(start: { [self] flight in
            start(flight, window: window, fetch: fetch)
        }))
        if let observer, let started { observeWaitEnded(observer, context, outcome, started: started) }
        return outcome
    }

    @inline(never) // The event stays out of a waiting request's frame ("3 waiters: N on IDTokenStore vs gates").
    private func observeWaitStarted(_ observer: any AuthorizationEventObserver, _ context: AuthorizationContext) -> TimeInterval {
        observer.observe(AuthorizationEvent(.waitStarted, endpoint: context.endpoint))
        return clock.monotonicNow()
    }

    @inline(never) // The event stays out of a waiting request's frame ("3 waiters: N on IDTokenStore vs gates").
    private func observeWaitEnded(_ observer: any AuthorizationEventObserver, _ context: AuthorizationContext,
                                  _ outcome: SingleFlight<Entry>.Outcome, started: TimeInterval) {
        observer.observe(AuthorizationEvent(.waitEnded, endpoint: context.endpoint, duration: clock.monotonicNow() - started,
                                            outcome: Self.eventOutcome(outcome)))
    }

    /// The value `outcome` serves `context`'s request, noted as issued in `generation`, or the
    /// error it fails with.
    private func served(_ outcome: SingleFlight<Entry>.Outcome, to context: AuthorizationContext, generation: UInt64) throws -> Value {
        switch outcome {
        case .value(let entry):
            issued.withLock { $0.note(entry.fingerprint, generation: generation) }
            // On the request too: behind a decorator, its rejection and retry after a logout fail as cleared.
            context.noteIssued(by: self, generation: generation)
            return entry.value
        case .failed(let error as RequestError) where options.failures == .asThrown || error.code == .credentialTimedOut:
            throw error.withEndpoint(context.endpoint)
        case .failed(let error):
            // The refresh window's refusal and an expired value come back as they are.
            throw RequestError.refreshFailed(error, endpoint: context.endpoint)
        case .timedOut:
            throw RequestError.credentialTimedOut(endpoint: context.endpoint, after: options.waitLimit ?? 0)
        case .deadlineExceeded:
            throw RequestError.deadlineExceeded(endpoint: context.endpoint, after: context.deadline?.seconds ?? 0)
        case .cleared:
            throw RequestError.credentialCleared(endpoint: context.endpoint)
        case .cancelled:
            // The caller's own doing: the authorizer reports it as cancelled, without a log line.
            throw CancellationError()
        }
    }

    /// Starts `flight`'s fetch, once the refresh window admits it; returns what cancels it.
    private func start(_ flight: SingleFlight<Entry>.Flight, window: AuthorizationContext.RefreshWindowGate?,
                       fetch: @escaping @Sendable (Refresh) async throws -> Value?) -> (@Sendable () -> Void)? {
        // model: start (admitRefresh, then the fetch's task)
        let current = flights.current
        // Counted in the authorizer's refresh window, however this fetch was started.
        if options.countsInRefreshWindow, let refused = flights.admitRefresh(through: window, replacing: current.map { credentialOf($0.value) }) {
            flights.finish(flight, with: .failure(refused))
            return nil
        }
        observer?.observe(AuthorizationEvent(.refreshStarted))
        let reason: Refresh.Reason = current == nil ? .noCredential : current?.rejection != nil ? .rejected : .expiring
        let refresh = Refresh(reason: reason, replacing: current?.value, rejection: current?.rejection, generation: flight.generation, flights: flights)
        let work = Task { await run(flight, refresh, fetch) }
        guard options.cancelsUnwatchedFetch else { return nil }
        return { work.cancel() }
    }

    private func run(_ flight: SingleFlight<Entry>.Flight, _ refresh: Refresh, _ fetch: @Sendable (Refresh) async throws -> Value?) async {
        do {
            // model: fetch, then finish
            guard let value = try await fetch(refresh) else { return }
            if flights.finish(flight, with: .success(Entry(value, credential: credentialOf))) == nil {
                diagnostics.log(.info, "The \(options.name) returned after a logout or after every request that waited for it had left; its token was dropped")
            }
        } catch {
            guard let waiting = flights.finish(flight, with: .failure(error)) else { return }
            if let expired = error as? RequestError, expired.code == .refreshedCredentialExpired {
                diagnostics.log(.warning, "The \(options.name) returned a token that had already expired; \(waiting) waiting requests fail",
                                event: RequestError.Code.refreshedCredentialExpired.rawValue)
            } else {
                diagnostics.log(.warning, "The \(options.name) failed (\(RequestError.summary(of: error))); \(waiting) waiting requests fail",
                                event: RequestError.Code.refreshFailed.rawValue)
            }
        }
    }

    private static func eventOutcome(_ outcome: SingleFlight<Entry>.Outcome) -> AuthorizationEvent.Outcome {
        switch outcome {
        case .value: .succeeded
        case .timedOut: .timedOut
        case .deadlineExceeded: .deadlineExceeded
        case .cleared: .cleared
        case .cancelled: .cancelled
        case .failed: .failed
        }
    }

    // MARK: The server's answers

    /// A rejection of `credential` with a status of ``Options/rejectionStatuses`` marks it stale
    /// (the next request fetches, told the server's answer) and asks for one retry. A rejection of a
    /// credential issued before the last ``clear(updating:thenRemove:)`` asks for none and marks
    /// nothing; another status fails the request.
    ///
    /// A rejection of `Credential.untilChallenged` (``Options/sendsOnlyWhenChallenged``) that
    /// carries a `WWW-Authenticate` challenge asks for a retry with the credential, which the
    /// refresh window does not count; one without a challenge fails the request.
    ///
    /// - Parameters:
    ///   - credential: The credential the server rejected (what the provider's `credentialRejected` got).
    ///   - response: The server's answer.
    ///   - marked: Run when this rejection marked the current value (to remove its stored copy,
    ///     say), while its generation is current, under the persistence lock.
    public func rejected(_ credential: Credential, response: ServerResponse, marked: (() -> Void)? = nil) -> RejectionDecision {
        guard options.rejectionStatuses.contains(response.statusCode) else { return .fail }
        if credential == .untilChallenged { return response.authenticationChallenges.isEmpty ? .fail : .retryWithoutRefresh }
        let fingerprint = credential.secretFingerprint
        let generation = flights.generation
        // Here as well as in the authorizer: a decorator an app puts in between must not turn a logout into a refresh.
        if let issuedIn = issued.withLock({ $0.generation(of: fingerprint) }), issuedIn != generation { return .fail }
        // model: evaluate (the stale mark)
        let didMark = flights.modify(ifGeneration: generation) { entry -> Bool in
            guard let current = entry, current.rejection == nil, current.fingerprint == fingerprint else { return false }
            entry = current.rejected(by: response)
            return true
        } ?? false
        if didMark, let marked { flights.persist(marked, generation: generation) }
        return .retry
    }

    // MARK: Setting and clearing

    /// Makes `value` the current one, ends the fetch if one runs, and resumes every waiting request
    /// with it.
    ///
    /// - Parameters:
    ///   - value: The new value.
    ///   - persist: Run under the persistence lock while the generation `value` landed in is
    ///     current (to store it).
    public func set(_ value: Value, persist: (() -> Void)? = nil) {
        let generation = flights.set(Entry(value, credential: credentialOf))
        if let persist { flights.persist(persist, generation: generation) }
    }

    /// Logout, or a change of user: forgets the value, fails the waiting requests with
    /// `credentialCleared`, cancels the fetch and drops what it returns late, and starts a new
    /// generation, so a request sent before and rejected after fails as cleared.
    ///
    /// - Parameters:
    ///   - update: Runs under the lock with the new generation (move the identity a store keys by,
    ///     so whoever reads that generation reads the identity it belongs to); never call back into
    ///     the refresher from it.
    ///   - remove: Runs after, under the persistence lock (remove the stored copy): no save of an
    ///     earlier generation can follow it.
    public func clear(updating update: (_ generation: UInt64) -> Void = { _ in }, thenRemove remove: () -> Void = {}) {
        // model: reset
        flights.reset(updating: update, thenRemove: remove)
    }

    /// Sets `value` as the current one only while `generation` is current and nothing else was
    /// set since it began (a value loaded from a store after a change of user, say).
    public func install(_ value: Value, ifGeneration generation: UInt64) {
        let arrived = Entry(value, credential: credentialOf)
        _ = flights.modify(ifGeneration: generation) { entry in if entry == nil { entry = arrived } }
    }

    /// Runs `save` under the persistence lock, only while `generation` is current.
    public func persist(_ save: () -> Void, generation: UInt64) {
        flights.persist(save, generation: generation)
    }
}
