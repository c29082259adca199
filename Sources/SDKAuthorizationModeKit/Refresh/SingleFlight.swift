import Foundation
import SDKAuthorization

/// The one "refresh once, let the others wait" of the framework: a current value, and at most one
/// flight (a refresh) that produces the next one while any number of requests wait for it.
///
/// The engine under ``CredentialRefresher``, which every refreshing provider is built on (the
/// built-in ones and a mode of your own): its guarantees are these:
/// - **One flight.** Requests that find no usable value while a flight runs join it; the first one
///   that finds none starts it. A flight older than ``Configuration/flightLifetime`` takes no new
///   waiters: the next request starts a new one.
/// - **Arrival order.** When a value arrives, every waiter resumes with it, in the order it began
///   waiting.
/// - **Each wait ends on its own** at the earliest of its wait limit (``Outcome/timedOut``), the
///   request's `RequestDeadline` (``Outcome/deadlineExceeded``) and its task's cancellation
///   (``Outcome/cancelled``); the others keep waiting.
/// - **Generations.** ``reset(updating:thenRemove:)`` (logout, identity change) ends every wait with
///   ``Outcome/cleared`` and starts a new generation: a flight of an earlier generation that
///   finishes late is discarded, neither installed nor stored (``persist(_:generation:)``).
/// - **Abandoned flights.** With ``Configuration/abandonsUnwatchedFlights``, a flight whose waiters
///   have all left (deadline, cancellation) is cancelled and forgotten, so a flight that never ends
///   cannot wedge the requests that come after it. With ``Configuration/waitsForAbandonedWork`` too,
///   its work still counts as running until its runner calls ``finish(_:with:)``: requests that come
///   meanwhile wait for it (within their own limits) instead of starting a second one, so work that
///   ignores cancellation never piles up; a value it delivers late serves them, and if it fails
///   a new flight starts for them. The same holds for a flight that reached its lifetime: until its
///   work ends, the requests that need a value fail with ``Configuration/flightTimeoutError`` at once.
///
/// One lock guards the value, the flight and the waiters; continuations are resumed outside it.
/// The waits' limits share one alarm, at the earliest: when it rings, one pass over the waits ends
/// those whose limit has passed and sets it for the next (the pass is as long as the waits, and
/// each alarm wake-up ends every wait due by then). A flight's lifetime is an alarm of its own.
/// Every timer is an `Alarms` alarm, the core's one timer source.
final class SingleFlight<Value: Sendable>: Sendable {
    /// How a wait ended.
    enum Outcome: Sendable {
        /// A usable value: the current one, or the one a flight (or ``set(_:)``) delivered.
        case value(Value)
        /// The flight failed with this error.
        case failed(any Error)
        /// The wait's own limit passed first.
        case timedOut
        /// The request's deadline passed first.
        case deadlineExceeded
        /// ``reset(updating:thenRemove:)`` ran while it waited (logout).
        case cleared
        /// Its task was cancelled.
        case cancelled
    }

    /// One flight, as its runner holds it: finishing it after a reset or after it was abandoned does nothing.
    struct Flight: Sendable, Equatable {
        /// The flight's number, counting from 1 in each instance.
        let number: UInt64
        /// The generation the flight belongs to: give it to ``SingleFlight/persist(_:generation:)``
        /// to store what the flight delivered.
        let generation: UInt64
    }

    /// How a flight ended, for the owner's events and logs.
    enum FlightEnd: Sendable, Equatable {
        /// It delivered a value.
        case succeeded
        /// It failed.
        case failed
        /// It reached ``Configuration/flightLifetime``.
        case timedOut
        /// A reset ended it.
        case cleared
        /// Every waiter left it and it was cancelled (``Configuration/abandonsUnwatchedFlights``).
        case abandoned
    }

    /// How flights behave: their lifetime, what ends them, and who is told.
    struct Configuration: Sendable {
        /// Seconds after which a running flight takes no new waiters (the next request starts a new
        /// one); `nil`, never.
        var flightLifetime: TimeInterval?
        /// What a flight that reaches its lifetime fails its waiters with; `nil` leaves them
        /// waiting until their own limits.
        var flightTimeoutError: (@Sendable () -> any Error)?
        /// Cancel and forget a flight once every waiter has left it by deadline or cancellation.
        var abandonsUnwatchedFlights: Bool
        /// Told when a flight ends, and how, with its age in seconds; outside the lock.
        var flightEnded: (@Sendable (FlightEnd, TimeInterval) -> Void)?
        /// With ``abandonsUnwatchedFlights``: one flight's work at a time. An abandoned flight's work
        /// runs until its runner calls ``finish(_:with:)`` (which it must, however the work ends),
        /// and no new flight starts before then.
        var waitsForAbandonedWork: Bool

        /// A configuration; by default flights live until they finish, keep running when every
        /// waiter has left, and nobody is told when they end.
        ///
        /// - Parameters:
        ///   - flightLifetime: ``flightLifetime``.
        ///   - flightTimeoutError: ``flightTimeoutError``.
        ///   - abandonsUnwatchedFlights: ``abandonsUnwatchedFlights``.
        ///   - waitsForAbandonedWork: ``waitsForAbandonedWork``.
        ///   - flightEnded: ``flightEnded``.

        init(flightLifetime: TimeInterval? = nil, flightTimeoutError: (@Sendable () -> any Error)? = nil,
                     abandonsUnwatchedFlights: Bool = false, waitsForAbandonedWork: Bool = false,
                     flightEnded: (@Sendable (FlightEnd, TimeInterval) -> Void)? = nil) {
            self.flightLifetime = flightLifetime
            self.flightTimeoutError = flightTimeoutError
            self.abandonsUnwatchedFlights = abandonsUnwatchedFlights
            self.waitsForAbandonedWork = waitsForAbandonedWork
            self.flightEnded = flightEnded
        }
    }

    /// What a request does when it finds no usable value.
    enum Join: Sendable {
        /// Wait; when no flight runs, call `start` (outside the lock) with the new flight. It may
        /// return what cancels the flight's work, run when the flight is abandoned or reset.
        case wait(start: @Sendable (Flight) -> (@Sendable () -> Void)?)
        /// Wait for a value without starting anything.
        case waitOnly
    }

    private enum Slot {
        /// Has an ID and a limit, and will register its continuation.
        case unregistered
        /// Ended before it registered; `register` resumes it with this.
        case endedBeforeRegistering(Outcome)
        /// Unsafe rather than checked: resumed exactly once, by whoever moves the slot out of
        /// `.waiting` under the lock.
        case waiting(UnsafeContinuation<Outcome, Never>)
        case ended
    }

    private struct Waiter {
        /// Monotonic seconds at which the wait ends by itself, and how.
        let endsAt: TimeInterval
        let endsAsDeadline: Bool
        var slot: Slot

        var limitOutcome: Outcome { endsAsDeadline ? .deadlineExceeded : .timedOut }
    }

    private struct RunningFlight {
        let flight: Flight
        /// Monotonic seconds.
        let startedAt: TimeInterval
        var lifetimeAlarm: Alarms.Alarm?
        var cancel: (@Sendable () -> Void)?
    }

    /// A flight that ended: its age, and what cancels its work.
    private typealias EndedFlight = (age: TimeInterval, cancel: (@Sendable () -> Void)?)
    /// Continuations to resume, outside the lock, in arrival order.
    private typealias Resumptions = [(UnsafeContinuation<Outcome, Never>, Outcome)]

    private typealias Start = @Sendable (Flight) -> (@Sendable () -> Void)?

    /// A flight that no longer takes waiters but whose work still runs.
    private struct AbandonedWork {
        let flight: Flight
        /// Monotonic seconds.
        let startedAt: TimeInterval
        /// Fails whoever waits for it once it reaches the flight lifetime, as the flight would have.
        var lifetimeAlarm: Alarms.Alarm?
    }

    private struct State {
        var value: Value?
        var generation: UInt64 = 0
        var flight: RunningFlight?
        /// An abandoned or timed-out flight whose work has not finished yet (``Configuration/waitsForAbandonedWork``).
        var abandonedWork: AbandonedWork?
        /// What starts a flight for the requests that wait behind ``abandonedWork``, should it fail.
        var pendingStart: Start?
        var flightCount: UInt64 = 0
        var waiters = NumberedQueue<Waiter>(firstNumber: 1)
        var waitingCount = 0
        var unregisteredCount = 0
        /// The one alarm at the earliest limit of the waiting waits, and its time.
        var limitAlarm: (alarm: Alarms.Alarm, at: TimeInterval)?

        /// Cancels the limit alarm once nothing waits, so nothing is held.
        mutating func dropLimitsIfIdle(_ alarms: Alarms) {
            guard waitingCount == 0, unregisteredCount == 0 else { return }
            if let (alarm, _) = limitAlarm { alarms.cancel(alarm) }
            limitAlarm = nil
        }

        /// Ends every wait with `outcome` (a waiter past its own limit, with its limit's outcome).
        mutating func endAll(with outcome: Outcome, at now: TimeInterval, alarms: Alarms) -> Resumptions {
            // model: endAll (a .value outcome is the model's handover)
            var resumed: Resumptions = []
            resumed.reserveCapacity(waitingCount)
            for index in waiters.liveIndices {
                let waiter = waiters[index]
                let ending = now < waiter.endsAt ? outcome : waiter.limitOutcome
                switch waiter.slot {
                case .waiting(let continuation):
                    resumed.append((continuation, ending))
                    waiters[index].slot = .ended
                case .unregistered:
                    waiters[index].slot = .endedBeforeRegistering(ending)
                    unregisteredCount -= 1
                case .endedBeforeRegistering, .ended:
                    break
                }
            }
            waitingCount = 0
            dropEnded()
            dropLimitsIfIdle(alarms)
            return resumed
        }

        mutating func dropEnded() {
            waiters.dropDone { if case .ended = $0.slot { true } else { false } }
        }

        /// Ends the running flight, if any.
        mutating func endFlight(at now: TimeInterval, alarms: Alarms) -> EndedFlight? {
            guard let running = flight else { return nil }
            flight = nil
            if let alarm = running.lifetimeAlarm { alarms.cancel(alarm) }
            return (now - running.startedAt, running.cancel)
        }
    }

    private let clock: any AuthorizationClock
    private let configuration: Configuration
    private let alarms: Alarms
    private let state: Locked<State>
    /// When the refreshes ``admitRefresh(through:replacing:)`` admitted started (monotonic seconds),
    /// oldest first: the provider's own count, whichever authorizers share it.
    private let refreshStarts = Locked<[TimeInterval]>([])
    /// Serializes what the owner writes to disk with what a reset removes (``persist(_:generation:)``).
    /// A plain lock: it guards no value (a `Locked<Void>`'s zero-size value made ThreadSanitizer
    /// report its inout accesses as a race).
    private let persistence = NSLock()

    /// An instance with no flight.
    ///
    /// - Parameters:
    ///   - clock: The clock whose monotonic time the waits' limits and the flights' lifetimes are on.
    ///   - configuration: How flights behave.
    ///   - value: The current value to begin with (a stored credential), or `nil`.
    init(clock: any AuthorizationClock, configuration: Configuration = Configuration(), value: Value? = nil) {
        self.clock = clock
        self.configuration = configuration
        self.alarms = Alarms(clock: clock)
        self.state = Locked(State(value: value))
    }

    // MARK: Reading

    /// The current value, usable or not.
    var current: Value? { state.withLock { $0.value } }

    /// The current generation: bumped by every ``reset(updating:thenRemove:)``.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// How many requests wait now.
    var waitingCount: Int { state.withLock { $0.waitingCount } }

    /// Waits and alarms still held; zero when nothing waits (for leak tests).
    var heldRecords: Int {
        state.withLock { $0.waiters.entries.count } + alarms.heldRecords
    }

    /// Changes the current value under the lock only while `generation` is current; nil otherwise.
    func modify<Result>(ifGeneration generation: UInt64, _ body: (inout Value?) -> Result) -> Result? {
        state.withLock { state in state.generation == generation ? body(&state.value) : nil }
    }

    /// The current value, when `isUsable` accepts it. `isUsable` runs under the lock, as in every
    /// call that takes one: keep it short and never call back into this instance.
    func usableValue(_ isUsable: (Value) -> Bool) -> Value? {
        state.withLock { state in state.value.flatMap { isUsable($0) ? $0 : nil } }
    }

    /// The current value when `isUsable` accepts it; otherwise ``wait(deadline:waitLimit:generation:isUsable:join:)``.
    /// With `generation`, only while that generation is current: after a reset, ``Outcome/cleared``.
    func value(deadline: RequestDeadline?, waitLimit: TimeInterval? = nil, generation: UInt64? = nil,
                       isUsable: (Value) -> Bool, join: Join) async -> Outcome {
        if let found = fastValue(generation: generation, isUsable: isUsable).found { return found }
        return await wait(deadline: deadline, waitLimit: waitLimit, generation: generation, isUsable: isUsable, join: join)
    }

    /// Without waiting: ``Outcome/cleared`` when `generation` is given and no longer current, the
    /// current value when `isUsable` accepts it, otherwise `nil`; with the current generation, read
    /// under the same lock (one acquisition per request on the fast path).
    func fastValue(generation: UInt64?, isUsable: (Value) -> Bool) -> (found: Outcome?, generation: UInt64) {
        // model: wait (the fast path: a usable value, or cleared for an old generation)
        state.withLock { state -> (found: Outcome?, generation: UInt64) in
            if let generation, state.generation != generation { return (.cleared, state.generation) }
            return (state.value.flatMap { isUsable($0) ? .value($0) : nil }, state.generation)
        }
    }

    /// Waits for a usable value, as `join` says, until `waitLimit` seconds pass, `deadline`
    /// passes, or the task is cancelled, whichever comes first. With `generation`, it waits (and
    /// starts a flight) only while that generation is current; otherwise it ends with ``Outcome/cleared``.
    func wait(deadline: RequestDeadline?, waitLimit: TimeInterval? = nil, generation: UInt64? = nil,
                      isUsable: (Value) -> Bool, join: Join) async -> Outcome {
        let now = clock.monotonicNow()
        var endsAt = waitLimit.map { now + $0 } ?? .infinity
        var endsAsDeadline = false
        if let deadline, deadline.uptime < endsAt {
            endsAt = deadline.uptime
            endsAsDeadline = true
        }
        // model: wait (the waiter appended, unregistered)
        let id = state.withLock { state -> UInt64 in
            state.unregisteredCount += 1
            return state.waiters.append(Waiter(endsAt: endsAt, endsAsDeadline: endsAsDeadline, slot: .unregistered))
        }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Outcome, Never>) in
                register(id, continuation, generation: generation, isUsable: isUsable, join: join)
            }
        } onCancel: {
            end(id, with: .cancelled)
        }
    }

    private enum Registration {
        case resume(Outcome)
        case waiting(started: Flight?, timedOut: EndedFlight?)
    }

    private func register(_ id: UInt64, _ continuation: UnsafeContinuation<Outcome, Never>, generation: UInt64?, isUsable: (Value) -> Bool, join: Join) {
        let ownFlights = FlightsInProgress.runByThisTask
        // model: register
        let registration = state.withLock { state -> Registration in
            let now = clock.monotonicNow()
            guard let index = state.waiters.index(of: id) else { return .resume(.cancelled) }
            let waiter = state.waiters[index]
            state.waiters[index].slot = .ended
            defer { state.dropEnded() }
            if case .endedBeforeRegistering(let outcome) = waiter.slot { return .resume(outcome) }
            state.unregisteredCount -= 1
            if now >= waiter.endsAt { return .resume(waiter.limitOutcome) }
            if let generation, state.generation != generation { return .resume(.cleared) }
            // A value that became usable since the request looked serves it.
            if let value = state.value, isUsable(value) { return .resume(.value(value)) }
            // model: selfWait
            // The work of the running flight waits here for its own result (a refresh that sends
            // its request through the client it refreshes for): it would wait until its limit.
            if let running = state.flight?.flight ?? state.abandonedWork?.flight, ownFlights.contains(where: { $0.number == running.number && $0.instance == ObjectIdentifier(self) }) {
                return .resume(.failed(RequestError.refreshWaitsForItself(endpoint: nil)))
            }
            if case .wait = join, state.flight == nil, let work = state.abandonedWork, let lifetime = configuration.flightLifetime,
               let timeoutError = configuration.flightTimeoutError, now - work.startedAt >= lifetime {
                // The one flight whose work may run has run past its lifetime and still runs: fail as it did.
                return .resume(.failed(timeoutError()))
            }
            state.waiters[index].slot = .waiting(continuation)
            state.waitingCount += 1
            if waiter.endsAt.isFinite {
                if state.limitAlarm.map({ waiter.endsAt < $0.at }) ?? true {
                    if let (alarm, _) = state.limitAlarm { alarms.cancel(alarm) }
                    state.limitAlarm = (alarms.schedule(at: waiter.endsAt) { [self] in expireLimits() }, waiter.endsAt)
                }
            }
            // A flight past its lifetime takes no new waiters.
            var timedOut: EndedFlight?
            if let running = state.flight, let lifetime = configuration.flightLifetime, now - running.startedAt >= lifetime {
                keepWorking(running, &state)
                timedOut = state.endFlight(at: now, alarms: alarms)
            }
            guard state.flight == nil, case .wait(let start) = join else { return .waiting(started: nil, timedOut: timedOut) }
            if state.abandonedWork != nil {
                // The work of an abandoned flight still runs: wait for it rather than run a second one.
                state.pendingStart = start
                return .waiting(started: nil, timedOut: timedOut)
            }
            return .waiting(started: beginFlight(&state, at: now), timedOut: timedOut)
        }
        switch registration {
        case .resume(let outcome):
            continuation.resume(returning: outcome)
        case .waiting(let started, let timedOut):
            if let timedOut { configuration.flightEnded?(.timedOut, timedOut.age) }
            if let started, case .wait(let start) = join { begin(started, with: start) }
        }
    }

    /// Runs `start` for `flight` with the flight marked as run by the calling task, so the work it
    /// starts (a task inherits the mark) is known as that flight's: a wait it makes on this
    /// instance while the flight runs would wait for itself (``register``).
    private func begin(_ flight: Flight, with start: Start) {
        let key = FlightsInProgress.Key(instance: ObjectIdentifier(self), number: flight.number)
        let cancel = FlightsInProgress.$runByThisTask.withValue(FlightsInProgress.runByThisTask + [key]) { start(flight) }
        if let cancel { attachCancel(cancel, to: flight) }
    }

    /// Keeps `running`'s work as the one that runs until its runner finishes it, when the
    /// configuration says so (``Configuration/waitsForAbandonedWork``); it fails its waiters with
    /// the timeout error once it reaches the flight lifetime.
    private func keepWorking(_ running: RunningFlight, _ state: inout State) {
        guard configuration.waitsForAbandonedWork else { return }
        if let alarm = state.abandonedWork?.lifetimeAlarm { alarms.cancel(alarm) }
        let flight = running.flight
        let alarm = configuration.flightLifetime.flatMap { lifetime in
            configuration.flightTimeoutError.map { _ in alarms.schedule(at: running.startedAt + lifetime) { [self] in expireWork(of: flight) } }
        }
        state.abandonedWork = AbandonedWork(flight: flight, startedAt: running.startedAt, lifetimeAlarm: alarm)
    }

    /// The abandoned work of `flight` reached the flight lifetime: whoever waits for it fails with the timeout error.
    private func expireWork(of flight: Flight) {
        let now = clock.monotonicNow()
        let resumed = state.withLock { state -> Resumptions in
            // model: expireWork
            guard state.abandonedWork?.flight == flight, let error = configuration.flightTimeoutError else { return [] }
            state.abandonedWork?.lifetimeAlarm = nil
            return state.endAll(with: .failed(error()), at: now, alarms: alarms)
        }
        for (continuation, outcome) in resumed { continuation.resume(returning: outcome) }
    }

    /// Makes a new flight the running one.
    private func beginFlight(_ state: inout State, at now: TimeInterval) -> Flight {
        // model: beginFlight
        state.flightCount += 1
        let flight = Flight(number: state.flightCount, generation: state.generation)
        let lifetimeAlarm = configuration.flightLifetime.map { lifetime in
            alarms.schedule(at: now + lifetime) { [self] in expire(flight) }
        }
        state.flight = RunningFlight(flight: flight, startedAt: now, lifetimeAlarm: lifetimeAlarm)
        return flight
    }

    /// Keeps what cancels `flight`'s work; runs it at once when the flight ended meanwhile without
    /// delivering (abandoned, reset or timed out).
    private func attachCancel(_ cancel: @escaping @Sendable () -> Void, to flight: Flight) {
        let runNow = state.withLock { state -> Bool in
            guard state.flight?.flight == flight else { return true }
            state.flight?.cancel = cancel
            return false
        }
        if runNow { cancel() }
    }

    /// Ends one wait, once: the first of value, failure, limit, reset and cancellation wins.
    private func end(_ id: UInt64, with outcome: Outcome) {
        // model: end (cancellation)
        let (continuation, unwatched) = state.withLock { state -> (UnsafeContinuation<Outcome, Never>?, (EndedFlight, FlightEnd)?) in
            guard let index = state.waiters.index(of: id) else { return (nil, nil) }
            switch state.waiters[index].slot {
            case .unregistered:
                state.waiters[index].slot = .endedBeforeRegistering(outcome)
                state.unregisteredCount -= 1
                return (nil, leaveUnwatched(&state))
            case .waiting(let continuation):
                state.waiters[index].slot = .ended
                state.waitingCount -= 1
                state.dropEnded()
                state.dropLimitsIfIdle(alarms)
                return (continuation, leaveUnwatched(&state))
            case .endedBeforeRegistering, .ended:
                return (nil, nil)
            }
        }
        if let (ended, how) = unwatched {
            if how == .abandoned { ended.cancel?() }
            configuration.flightEnded?(how, ended.age)
        }
        continuation?.resume(returning: outcome)
    }

    /// What becomes of the running flight once its last waiter has left: abandoned when the
    /// configuration says so; otherwise it ends as timed out if it has reached its lifetime, or
    /// keeps running with no alarm held (a request that comes after its lifetime starts a new one).
    private func leaveUnwatched(_ state: inout State) -> (EndedFlight, FlightEnd)? {
        // model: leaveUnwatched
        guard state.waitingCount == 0, state.unregisteredCount == 0, let running = state.flight else { return nil }
        let now = clock.monotonicNow()
        if configuration.abandonsUnwatchedFlights {
            // No longer the current flight: whatever it delivers late is discarded (see `finish`),
            // unless its work is still waited for.
            keepWorking(running, &state)
            return state.endFlight(at: now, alarms: alarms).map { ($0, .abandoned) }
        }
        if let lifetime = configuration.flightLifetime, now - running.startedAt >= lifetime {
            return state.endFlight(at: now, alarms: alarms).map { ($0, .timedOut) }
        }
        if let alarm = running.lifetimeAlarm {
            alarms.cancel(alarm)
            state.flight?.lifetimeAlarm = nil
        }
        return nil
    }

    /// The earliest limit came: ends every wait whose limit has passed, then sets the alarm for
    /// the next limit, in one pass over the waits.
    private func expireLimits() {
        let now = clock.monotonicNow()
        // model: expireLimits
        let (resumed, unwatched) = state.withLock { state -> (Resumptions, (EndedFlight, FlightEnd)?) in
            state.limitAlarm = nil
            var resumed: Resumptions = []
            var next = TimeInterval.infinity
            for index in state.waiters.liveIndices {
                guard case .waiting(let continuation) = state.waiters[index].slot else { continue }
                let waiter = state.waiters[index]
                guard waiter.endsAt <= now else {
                    next = min(next, waiter.endsAt)
                    continue
                }
                resumed.append((continuation, waiter.limitOutcome))
                state.waiters[index].slot = .ended
                state.waitingCount -= 1
            }
            if next.isFinite {
                state.limitAlarm = (alarms.schedule(at: next) { [self] in expireLimits() }, next)
            }
            state.dropEnded()
            state.dropLimitsIfIdle(alarms)
            return (resumed, resumed.isEmpty ? nil : leaveUnwatched(&state))
        }
        if let (ended, how) = unwatched {
            if how == .abandoned { ended.cancel?() }
            configuration.flightEnded?(how, ended.age)
        }
        for (continuation, outcome) in resumed { continuation.resume(returning: outcome) }
    }

    /// A flight reached its lifetime: it takes no new waiters, and with a timeout error its waiters fail.
    private func expire(_ flight: Flight) {
        let now = clock.monotonicNow()
        // model: expire
        let (ended, resumed) = state.withLock { state -> (EndedFlight?, Resumptions) in
            guard let running = state.flight, running.flight == flight else { return (nil, []) }
            keepWorking(running, &state)
            let ended = state.endFlight(at: now, alarms: alarms)
            guard let error = configuration.flightTimeoutError else { return (ended, []) }
            return (ended, state.endAll(with: .failed(error()), at: now, alarms: alarms))
        }
        guard let ended else { return }
        if configuration.flightTimeoutError != nil { ended.cancel?() }
        configuration.flightEnded?(.timedOut, ended.age)
        for (continuation, outcome) in resumed { continuation.resume(returning: outcome) }
    }

    // MARK: The refresh window

    /// Asks whether a refresh in place of `credential` (the token it replaces, if any) may start:
    /// call it where a flight's work begins, with the request's `AuthorizationContext.refreshWindow`.
    ///
    /// Two counts must allow it. This instance's own: at most the gate's
    /// `AuthorizationOptions.RefreshWindow.maximumRefreshes` refreshes within its `AuthorizationOptions.RefreshWindow.interval` for the
    /// value kept here, however many authorizers (clients) share the provider; and the authorizer's
    /// (`AuthorizationContext.RefreshWindowGate.admitRefresh(replacing:)`), which also counts the refresh a rejection
    /// was granted once. Without a gate (a context made by hand) nothing is counted.
    ///
    /// - Returns: `nil` when the refresh may start (it is then counted in both); otherwise the error
    ///   its waiting requests fail with (`RequestError.Code.refreshWindowExceeded`).
    func admitRefresh(through gate: AuthorizationContext.RefreshWindowGate?, replacing credential: Credential?) -> RequestError? {
        guard let gate else { return nil }
        let window = gate.window
        let now = clock.monotonicNow()
        let full = refreshStarts.withLock { starts -> Bool in
            starts.removeAll { now - $0 >= window.interval }
            return starts.count >= window.maximumRefreshes
        }
        if full { return gate.refuse() }
        if let refused = gate.admitRefresh(replacing: credential) { return refused }
        refreshStarts.withLock { $0.append(now) }
        return nil
    }

    // MARK: Delivering

    /// Ends `flight` with `result`: a value becomes the current one and every waiter resumes with
    /// it (the current flight ends too); a failure of the current flight fails every waiter.
    /// Nothing happens when a reset came since the flight started, or the flight was abandoned;
    /// a failure of a flight that is no longer the current one is ignored.
    ///
    /// - Returns: How many waiters it resumed, or `nil` when `result` was discarded.
    @discardableResult
    func finish(_ flight: Flight, with result: Result<Value, any Error>) -> Int? {
        let now = clock.monotonicNow()
        // model: finish
        var restart: (Flight, Start)?
        let taken = state.withLock { state -> (resumed: Resumptions, ended: EndedFlight?)? in
            let wasAbandonedWork = state.abandonedWork?.flight == flight
            var pendingStart: Start?
            if wasAbandonedWork {
                if let alarm = state.abandonedWork?.lifetimeAlarm { alarms.cancel(alarm) }
                state.abandonedWork = nil
                pendingStart = state.pendingStart
                state.pendingStart = nil
            }
            guard flight.generation == state.generation else { return nil }
            let isCurrent = state.flight?.flight == flight
            switch result {
            case .success(let value):
                // A late value of an earlier flight of the same generation is still this user's,
                // unless that flight was abandoned (and its work no longer waited for).
                guard isCurrent || wasAbandonedWork || !configuration.abandonsUnwatchedFlights else { return nil }
                state.value = value
                let ended = state.endFlight(at: now, alarms: alarms)
                return (state.endAll(with: .value(value), at: now, alarms: alarms), ended)
            case .failure(let error):
                guard isCurrent else {
                    // The requests that waited behind abandoned work that failed get a flight of their own.
                    if let start = pendingStart, state.flight == nil, state.waitingCount + state.unregisteredCount > 0 {
                        restart = (beginFlight(&state, at: now), start)
                    }
                    return nil
                }
                let ended = state.endFlight(at: now, alarms: alarms)
                return (state.endAll(with: .failed(error), at: now, alarms: alarms), ended)
            }
        }
        if let (started, start) = restart { begin(started, with: start) }
        guard let taken else { return nil }
        if let ended = taken.ended {
            let succeeded = if case .success = result { true } else { false }
            configuration.flightEnded?(succeeded ? .succeeded : .failed, ended.age)
        }
        for (continuation, outcome) in taken.resumed { continuation.resume(returning: outcome) }
        return taken.resumed.count
    }

    /// Makes `value` the current one, ends the flight if one runs, and resumes every waiter with it.
    ///
    /// - Returns: The generation it belongs to, for ``persist(_:generation:)``.
    @discardableResult
    func set(_ value: Value) -> UInt64 {
        let now = clock.monotonicNow()
        let (resumed, ended, generation) = state.withLock { state in
            state.value = value
            // A value set by hand replaces whatever abandoned work would have delivered.
            if let alarm = state.abandonedWork?.lifetimeAlarm { alarms.cancel(alarm) }
            state.abandonedWork = nil
            state.pendingStart = nil
            let ended = state.endFlight(at: now, alarms: alarms)
            return (state.endAll(with: .value(value), at: now, alarms: alarms), ended, state.generation)
        }
        if let ended { configuration.flightEnded?(.succeeded, ended.age) }
        for (continuation, outcome) in resumed { continuation.resume(returning: outcome) }
        return generation
    }

    /// Starts a new generation (logout, identity change): forgets the value, cancels and forgets
    /// the flight (its late result is discarded), and ends every wait with ``Outcome/cleared``.
    /// `update` runs under the lock with the new generation, so whoever reads that generation sees
    /// what it changed (the identity the new generation belongs to, say); it must not call back into
    /// this instance. `remove` runs after, under the persistence lock, so no save of an earlier
    /// generation can follow it.
    func reset(updating update: (_ generation: UInt64) -> Void = { _ in }, thenRemove remove: () -> Void = {}) {
        let now = clock.monotonicNow()
        let (resumed, ended) = state.withLock { state in
            // model: reset
            state.generation += 1
            update(state.generation)
            state.value = nil
            if let alarm = state.abandonedWork?.lifetimeAlarm { alarms.cancel(alarm) }
            state.abandonedWork = nil
            state.pendingStart = nil
            let ended = state.endFlight(at: now, alarms: alarms)
            return (state.endAll(with: .cleared, at: now, alarms: alarms), ended)
        }
        if let ended {
            ended.cancel?()
            configuration.flightEnded?(.cleared, ended.age)
        }
        persistence.lock()
        remove()
        persistence.unlock()
        for (continuation, outcome) in resumed { continuation.resume(returning: outcome) }
    }

    /// Runs `save` under the persistence lock, only while `generation` is still current: a value
    /// that a reset has made obsolete is never written, and a reset's removal never comes before a
    /// save of the generation it ended.
    func persist(_ save: () -> Void, generation: UInt64) {
        persistence.lock()
        defer { persistence.unlock() }
        // model: persist
        guard state.withLock({ $0.generation }) == generation else { return }
        save()
    }
}

/// The flights whose work the current task runs: marked when a flight's start runs
/// (``SingleFlight``'s `begin`), inherited by the tasks it starts.
enum FlightsInProgress {
    struct Key: Hashable, Sendable {
        let instance: ObjectIdentifier
        let number: UInt64
    }

    @TaskLocal static var runByThisTask: [Key] = []
}
