import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit

/// Why the request queue refused or could not keep a request.
///
/// It is a struct with a ``Code`` rather than an enum, as `RequestError` is: later versions add
/// codes without breaking any caller's exhaustive `switch`. Match on ``code`` and read the context
/// from the properties that apply to it; the others are `nil`.
///
/// ```swift
/// do {
///     try await queue.enqueue(request)
/// } catch where error.code == .full {
///     showStorageWarning(limit: error.maximumEntries)
/// } catch {
///     logger.error("\(error)")
/// }
/// ```
///
/// Two errors are equal when their ``code`` and ``message`` are equal; the message repeats the
/// context, so the context properties are not compared separately. Its texts, `dump` and equality
/// are those of every error of the framework (`ErrorShape.Coded`).
public struct SignatureQueueError: ErrorShape.Coded {
    /// What went wrong, as a stable name a caller can match on.
    public struct Code: ErrorShape.Code {
        /// The code's name.
        public let rawValue: String
        /// Creates a code.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The queue holds its maximum; nothing was dropped to make room.
        public static let full = Code(rawValue: "full")
        /// The request cannot be kept: a body over 1 MiB, a URL over 8 KB, too many or too long
        /// header fields, or a bad user ID.
        public static let entryTooLarge = Code(rawValue: "entryTooLarge")
        /// Another queue (in this or another process) has the same file open.
        public static let queueInUse = Code(rawValue: "queueInUse")
        /// The file system refused a read or write; the request was not queued.
        public static let storageFailed = Code(rawValue: "storageFailed")
        /// The queue was closed.
        public static let closed = Code(rawValue: "closed")
        /// The queue's name or options are out of range.
        public static let invalidConfiguration = Code(rawValue: "invalidConfiguration")
    }

    // Held inline rather than in a shared box as RequestError's context is: the journal makes these
    // errors on its I/O dispatch queue and hands them to tasks through continuations, and
    // ThreadSanitizer on Linux does not see that hand-off, so it reports a box's fields written on
    // the queue and read in the task as a data race.

    /// What went wrong.
    public let code: Code
    /// A sentence that says what happened, the text the queue logs.
    public let message: String
    /// The most requests the queue holds, for ``Code/full``.
    public let maximumEntries: Int?
    /// The most bytes the queue holds, for ``Code/full``.
    public let maximumBytes: Int?
    /// The queue's name, for ``Code/queueInUse``.
    public let name: String?
    /// Why, for ``Code/entryTooLarge``, ``Code/storageFailed`` and ``Code/invalidConfiguration``.
    public let reason: String?

    /// Creates an error with `code` and `message` (for codes added in extensions).
    public init(_ code: Code, _ message: String) {
        self.init(code, message, maximumEntries: nil)
    }

    private init(_ code: Code, _ message: String, maximumEntries: Int?, maximumBytes: Int? = nil, name: String? = nil, reason: String? = nil) {
        self.code = code
        self.message = message
        self.maximumEntries = maximumEntries
        self.maximumBytes = maximumBytes
        self.name = name
        self.reason = reason
    }

    // MARK: Making errors

    /// The queue holds its maximum of `maximumEntries` requests or `maximumBytes` bytes; nothing
    /// was dropped to make room.
    public static func full(maximumEntries: Int, maximumBytes: Int) -> SignatureQueueError {
        SignatureQueueError(.full, "The request queue is full (at most \(maximumEntries) requests and \(maximumBytes) bytes); the request was not queued",
                            maximumEntries: maximumEntries, maximumBytes: maximumBytes)
    }

    /// The request cannot be kept, for `reason`: a body over 1 MiB, a URL over 8 KB, too many or
    /// too long header fields, or a bad user ID.
    public static func entryTooLarge(_ reason: String) -> SignatureQueueError {
        SignatureQueueError(.entryTooLarge, "The request cannot be queued: \(reason)", maximumEntries: nil, reason: reason)
    }

    /// Another queue (in this or another process) has the file of the queue `name` open.
    public static func queueInUse(name: String) -> SignatureQueueError {
        SignatureQueueError(.queueInUse, "The request queue \(LogText.escaped(name)) is open in another queue or process", maximumEntries: nil, name: name)
    }

    /// The file system refused a read or write, for `reason`; the request was not queued.
    public static func storageFailed(_ reason: String) -> SignatureQueueError {
        SignatureQueueError(.storageFailed, "The request queue could not use its file: \(reason)", maximumEntries: nil, reason: reason)
    }

    /// The queue was closed.
    public static let closed = SignatureQueueError(.closed, "The request queue is closed")

    /// The queue's name or options are out of range, for `reason`.
    public static func invalidConfiguration(_ reason: String) -> SignatureQueueError {
        SignatureQueueError(.invalidConfiguration, "The request queue cannot be opened: \(reason)", maximumEntries: nil, reason: reason)
    }
}

/// A durable queue for the signature mode's requests: nothing queued is lost to a crash, and a
/// rejected request is retried, with backoff, carrying the current signature of the user who made it,
/// without holding up the requests of other users.
///
/// ```swift
/// let directory = SignatureRequestQueue.defaultDirectory(for: try CredentialNamespace("com.example.sdk"))
/// let queue = try SignatureRequestQueue(directory: directory, authentication: authentication, client: client)
/// let id = try await queue.enqueue(OutgoingRequest(method: "POST", url: dataURL, body: events))
/// ```
///
/// - ``enqueue(_:)`` returns once the request is written to disk (flushed, not only buffered);
///   concurrent enqueues share one write. A write the disk refuses or cuts short (a full disk) throws
///   ``SignatureQueueError/storageFailed(_:)`` and leaves the file as it was before it, so requests
///   queued earlier or later are never hidden by it. After a crash or a restart, ``init(name:directory:authentication:client:options:clock:diagnostics:random:onUndeliverable:)``
///   reloads every request that was not finished, and sends them first.
/// - **Lanes.** Each user's requests (and the anonymous ones, queued for no user) are a lane of their
///   own: within a lane they are sent oldest first, each only once the one before it is finished; one
///   request is sent at a time overall, the oldest of those whose lane may send now. So while every
///   lane is healthy requests go in the order they were queued, and a user whose requests fail never
///   holds up another user's. Each request carries an `Idempotency-Key` header that stays the same on
///   every attempt, so a server can recognise a request sent again.
/// - A request that was being sent when the process stopped may have reached the server: it is
///   sent again and listed in ``recovery`` (``Recovery/inDoubt``) and in the diagnostics. Every
///   other request is sent exactly once after it is accepted.
/// - On a failure (a rejected signature, a network failure, HTTP 408, 429 or 5xx) the lane waits
///   ``Options/backoff`` and tries again, or as long as the response's `Retry-After` field asks
///   (seconds or an HTTP date, read on the clock's wall time): never less than the backoff's minimum,
///   at most one hour (or the backoff's maximum when that is longer); a value that cannot be read is
///   ignored. A new signature for the user of a lane whose signature was rejected retries that lane
///   at once (not before a `Retry-After`). After ``Options/pauseAfterAuthenticationFailures``
///   consecutive authentication failures of one user's requests, that user's retries pause until
///   ``startSession()``, a ``flush()`` or a request of theirs that goes through; other users' go on.
/// - A request whose user has no signature (signatures are kept in memory only: after a relaunch,
///   until the app sets them again) is sent without one. If the server refuses it for that, the
///   failure subscribers get a ``SignatureFailure`` with ``SignatureErrorCode/missingToken`` for that
///   user, once, and the user's lane waits, with no timed retry, until
///   ``SignatureAuthentication/setSignature(_:for:)`` (or ``SignatureAuthentication/changeUser(_:signature:)``)
///   gives the user a signature, which sends it at once; other lanes go on meanwhile.
/// - A request is given up, removed, logged at error level and handed to `onUndeliverable` with an
///   ``Undeliverable/Reason``: ``Undeliverable/Reason/refused`` when the server refuses it for good
///   (another 4xx) or it can never be sent (an invalid header or URL);
///   ``Undeliverable/Reason/tooManyAttempts`` once the server has answered ``Options/maximumAttempts``
///   of its attempts with a failure (attempts survive a relaunch; one that got no answer is not
///   counted); ``Undeliverable/Reason/tooOld`` once it has been queued longer than
///   ``Options/maximumAge``, even while its lane waits for a signature or is paused.
/// - ``removeRequests(forUser:)`` drops a user's queued requests (at logout), durably.
/// - A full queue refuses new requests with ``SignatureQueueError/full(maximumEntries:maximumBytes:)``
///   rather than dropping old ones.
///
/// The queue sends until ``close()``: keep one per name for the life of the SDK, and close it
/// before opening another on the same file.
///
/// The file is `<name>.queue` in ``directory``: created owner-only (0600) in an owner-only (0700)
/// directory. A directory that other users can write (group or other write permission), that is a
/// symbolic link, that another user owns, or that sits under a parent another user could replace it
/// through (not owned by this user or root, or writable by others without the sticky bit) is refused
/// with ``SignatureQueueError/storageFailed(_:)``, not repaired; so are a queue or lock file that is a
/// symbolic link (nothing is written or chmod-ed through it), not a regular file (a FIFO is refused
/// without waiting on it), owned by another user or writable by others. The default directory is `Library/Application Support/SDKAuthorization/Queues` in
/// the user's domain on Apple platforms and `$XDG_DATA_HOME/SDKAuthorization/queues` (or
/// `~/.local/share/SDKAuthorization/queues`) elsewhere.
public final class SignatureRequestQueue: Sendable, CustomStringConvertible, CustomReflectable {
    /// Capacity, backoff, pause and the limits of a request's life.
    public struct Options: Sendable, Equatable {
        /// The most requests kept at once (default 10,000; 1 to 1,000,000).
        public var maximumEntries: Int
        /// The most bytes of requests kept at once (default 32 MiB; 1 KiB to 1 GiB).
        public var maximumBytes: Int
        /// The waits between attempts.
        public var backoff: RetryBackoff
        /// After this many consecutive authentication failures of one user's requests, that user's
        /// retries pause until the next session (default 50; 1 to 10,000).
        public var pauseAfterAuthenticationFailures: Int
        /// The header that carries each request's idempotency key (default `Idempotency-Key`); not
        /// one the transport owns (`Host`, `Content-Length`, `Cookie`, `Content-Type`, `Proxy-*`...),
        /// not `Authorization`, and not the header of the signature or of another credential the
        /// client's providers send (compared case-insensitively): each header has one role.
        public var idempotencyHeaderName: String
        /// Once the server has answered this many attempts of a request with a failure, the request
        /// is given up (``Undeliverable/Reason/tooManyAttempts``) (default 100; 1 to 1,000).
        ///
        /// Attempts are counted in the queue's file, so a relaunch does not reset them. One that got
        /// no answer (no connection, a timeout) is not counted, so a device offline for long loses
        /// nothing to this limit (``maximumAge`` bounds that); one under way when the process
        /// stopped is counted.
        public var maximumAttempts: Int
        /// The longest a request stays queued, in seconds, from its enqueue; an older one is given up
        /// (``Undeliverable/Reason/tooOld``) (default 7 days; 60 seconds to 365 days).
        ///
        /// Age is counted on the clock's monotonic time, so setting the device's clock forward or
        /// back never gives up a request or delays its end: while the queue is open, and across
        /// launches within one boot of the device (the queue's file keeps, with each request, the
        /// age counted and the monotonic time it was counted at; for that, a custom clock's
        /// monotonic time must count from the system's boot, as `SystemClock`'s does). The monotonic
        /// clock restarts with the device, so the time from a request's last mark to the first
        /// launch after a restart is read from the wall clock (never less than 0); that launch then
        /// writes down the age it counted, so a later change of the wall clock does not age the
        /// request again. A wall clock before 2025 (a device that booted with its clock at 1970)
        /// tells no time: the time from or to it is not counted. Time the device sleeps is not
        /// counted (the monotonic clock stops).
        public var maximumAge: TimeInterval

        /// Creates options.
        public init(
            maximumEntries: Int = 10_000,
            maximumBytes: Int = 32 << 20,
            backoff: RetryBackoff = RetryBackoff(),
            pauseAfterAuthenticationFailures: Int = 50,
            idempotencyHeaderName: String = "Idempotency-Key",
            maximumAttempts: Int = 100,
            maximumAge: TimeInterval = 7 * 86_400
        ) {
            self.maximumEntries = maximumEntries
            self.maximumBytes = maximumBytes
            self.backoff = backoff
            self.pauseAfterAuthenticationFailures = pauseAfterAuthenticationFailures
            self.idempotencyHeaderName = idempotencyHeaderName
            self.maximumAttempts = maximumAttempts
            self.maximumAge = maximumAge
        }
    }

    /// What the queue found in its file when it opened.
    public struct Recovery: Sendable, Equatable {
        /// How many unfinished requests were reloaded.
        public let recoveredCount: Int
        /// Requests whose sending had begun when the queue last stopped: the server may have
        /// received them. They are sent again with the same idempotency key.
        public let inDoubt: [UUID]
        /// Bytes of the file that could not be read: a record cut short at its end (a request whose
        /// write was interrupted before ``enqueue(_:)`` returned), or damage. A damaged record is
        /// skipped by its own length and the requests after it are recovered; it is reported in the
        /// diagnostics with its offset, length and why it could not be read (never its content),
        /// and its bytes are kept beside the file (`<name>.queue.damaged-<time>`) for inspection.
        public let unreadableBytes: Int
        /// The file did not start with the queue's header; it was moved aside and the queue started empty.
        public let unrecognizedFile: Bool
    }

    /// A request the queue gave up on, with the reason.
    public struct Undeliverable: Sendable {
        /// Why the queue gave up on a request.
        ///
        /// A struct rather than an enum, as ``SignatureQueueError/Code`` is (an `ErrorShape.Code`,
        /// which prints its raw value): later versions add reasons without breaking a caller's
        /// exhaustive `switch`.
        public struct Reason: ErrorShape.Code {
            /// The reason's name.
            public let rawValue: String
            /// Creates a reason.
            public init(rawValue: String) { self.rawValue = rawValue }

            /// The server refused it for good (a 4xx other than 401, 403, 408 and 429), or it can
            /// never be sent (an invalid header or URL).
            public static let refused = Reason(rawValue: "refused")
            /// The server answered ``Options/maximumAttempts`` of its attempts with a failure.
            public static let tooManyAttempts = Reason(rawValue: "tooManyAttempts")
            /// It was queued longer than ``Options/maximumAge``.
            public static let tooOld = Reason(rawValue: "tooOld")
        }

        /// The request's queue ID, as ``enqueue(_:)`` returned it.
        public let id: UUID
        /// The user it belonged to.
        public let userId: String?
        /// Why it cannot be delivered: the server's answer or why it cannot be sent, for
        /// ``Reason/refused``; its last failure, for ``Reason/tooManyAttempts``; for ``Reason/tooOld``,
        /// an error with code `RequestError.Code.deadlineExceeded` whose `underlyingError` and
        /// `response` are those of its last failure, when this queue saw one.
        public let error: RequestError
        /// Why the queue gave up on it.
        public let reason: Reason
    }

    /// The longest wait a `Retry-After` field obtains, unless the backoff's maximum is longer.
    static let retryAfterCap: TimeInterval = 3_600

    /// One user's requests (or the anonymous ones): their backoff, pause and wait for a signature.
    /// A lane that has seen no failure since its last success has no entry.
    private struct Lane {
        var consecutiveFailures = 0
        var consecutiveAuthenticationFailures = 0
        /// Monotonic time before which the lane's oldest request is not sent; `nil`: now.
        var nextAttempt: TimeInterval?
        /// The end of a `Retry-After` wait: not even a new signature sends before it.
        var retryAfterUntil: TimeInterval?
        /// The last attempt's signature was refused: a new signature for the user retries at once.
        var waitingForSignature = false
        /// The last attempt went without a signature (the user had none) and was refused: no timed
        /// retry until the user has a signature.
        var needsSignature = false
        var paused = false
        /// The oldest request's last failure, for ``Undeliverable``.
        var lastFailure: (id: UUID, error: RequestError)?
    }

    private struct State {
        /// By user, compared as exact bytes (``UserKey``); `nil`: the anonymous lane.
        var lanes: [UserKey?: Lane] = [:]
        /// Lanes whose requests are being removed: none of them is sent meanwhile.
        var removing: [UserKey?: Int] = [:]
        /// Requests whose last attempt got no answer: its `sending` record stands for the next one,
        /// so that only answered attempts count towards ``Options/maximumAttempts``.
        var unanswered: Set<UUID> = []
        /// A ``flush()`` pass: every lane may send, whatever its backoff or pause, until a request fails.
        var flushRequested = false
        /// Callers of ``flush()`` and ``waitUntilIdle()``, answered when the sender next parks.
        var flushWaiters: [CheckedContinuation<Int, Never>] = []
        /// The sender waits for a wake-up (an enqueue, a signature, a flush, its timer).
        var parked = false
        /// When the parked sender's timer fires (a backoff ends, a request reaches its maximum age).
        var parkedUntil: TimeInterval?
        var wakeSignal = false
        var waiter: CheckedContinuation<Void, Never>?
        var timer: Alarms.Alarm?
        var closed = false
        /// When each request queued in this launch was queued, on the monotonic clock: its age
        /// counts from there, whatever the wall clock does meanwhile.
        var queuedAt: [UUID: TimeInterval] = [:]
    }

    /// The queue's name: its file is `<name>.queue`.
    public let name: String
    /// The directory of its file.
    public let directory: URL
    /// The options in force.
    public let options: Options
    /// What was found in the file at opening.
    public let recovery: Recovery

    private let authentication: SignatureAuthentication
    private let client: AuthorizedHTTPClient
    private let journal: RequestJournalFile
    private let clock: any AuthorizationClock
    /// The parked sender's timer: the framework's one timer source, on `clock`.
    private let alarms: Alarms
    private let diagnostics: any DiagnosticsSink
    private let random: @Sendable () -> Double
    private let onUndeliverable: (@Sendable (Undeliverable) -> Void)?
    /// Where `onUndeliverable` runs, in the order requests were given up: off the sender, so an app
    /// callback that is slow or blocks never holds the queue's sending.
    private let undeliverableDeliveries = DispatchQueue(label: "SDKAuthorization.SignatureRequestQueue.undeliverable")
    private let state = Locked(State())
    private let subscription: Locked<SignatureFailureSubscription?> = Locked(nil)
    private let sender: Locked<Task<Void, Never>?> = Locked(nil)
    /// The system's boot session when the queue opened: a request marked in it ages on the
    /// monotonic clock across launches.
    private let bootSession: [UInt8]

    /// The platform's default directory for the queue files of `namespace` (the SDK, usually its
    /// bundle identifier): a subdirectory named after it of `Library/Application Support/SDKAuthorization/Queues`
    /// on Apple platforms, of `$XDG_DATA_HOME/SDKAuthorization/queues` (or
    /// `~/.local/share/SDKAuthorization/queues`) elsewhere. Two SDKs in one app never share a queue
    /// file this way, even with the same queue name.
    public static func defaultDirectory(for namespace: CredentialNamespace) -> URL {
        // Beside the credential store's default directories, in the framework's data directory.
        #if canImport(Darwin)
        let name = "Queues"
        #else
        let name = "queues"
        #endif
        return FileCredentialStore.defaultDirectory(for: namespace).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(name, isDirectory: true).appendingPathComponent(namespace.name, isDirectory: true)
    }

    /// Opens the queue `name` in `directory` (creating it when missing), reloads what it holds and
    /// starts sending.
    ///
    /// - Parameters:
    ///   - name: 1 to 64 letters, digits, `-` and `_`; one queue per name and directory at a time.
    ///   - directory: Where the file lives: your SDK's own directory, usually
    ///     ``defaultDirectory(for:)`` with your namespace. It must not be writable by other users.
    ///   - authentication: The signature mode whose users and signatures the requests carry.
    ///   - client: How requests are sent; its policy must give them the `AuthorizationScheme/signature` scheme.
    ///   - options: Capacity, backoff, pause and limits.
    ///   - clock: Monotonic time for the backoff and the requests' age; wall time for `Retry-After` dates and, after a restart of the device, for the time between launches (``Options/maximumAge``).
    ///   - diagnostics: Where recovery, failures and undeliverable requests are reported.
    ///   - random: A draw in `0...1` for the backoff's jitter (default the system's generator).
    ///   - onUndeliverable: Called for each request the queue gives up on, once it is removed from
    ///     the file, in the order they were given up, on a serial queue of the queue's own (never on
    ///     the sender: a slow callback holds no request); ``undeliverableDelivered()`` waits for it.
    /// - Throws: ``SignatureQueueError``: a bad name or options, the queue open elsewhere, a
    ///   directory or file that cannot be used (a directory other users can write or replace, a
    ///   queue file that is a symbolic link, not a regular file or another user's).
    public convenience init(
        name: String = "signature-requests",
        directory: URL,
        authentication: SignatureAuthentication,
        client: AuthorizedHTTPClient,
        options: Options = Options(),
        clock: any AuthorizationClock = SystemClock(),
        diagnostics: any DiagnosticsSink = StandardErrorDiagnosticsSink.inDebugBuilds,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0...1) },
        onUndeliverable: (@Sendable (Undeliverable) -> Void)? = nil
    ) throws(SignatureQueueError) {
        try self.init(
            name: name, directory: directory, authentication: authentication, client: client, options: options, clock: clock,
            diagnostics: diagnostics, random: random, onUndeliverable: onUndeliverable, bootSession: BootSession.current()
        )
    }

    /// Opens the queue as the public initializer does, in the boot session `bootSession` (tests
    /// name one to act out a restart of the device).
    init(
        name: String, directory: URL, authentication: SignatureAuthentication, client: AuthorizedHTTPClient, options: Options,
        clock: any AuthorizationClock, diagnostics: any DiagnosticsSink, random: @escaping @Sendable () -> Double,
        onUndeliverable: (@Sendable (Undeliverable) -> Void)?, bootSession: [UInt8]
    ) throws(SignatureQueueError) {
        guard (1...64).contains(name.utf8.count), name.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }) else {
            throw .invalidConfiguration("a queue name has 1 to 64 letters, digits, '-' and '_'")
        }
        guard (1...1_000_000).contains(options.maximumEntries) else { throw .invalidConfiguration("maximumEntries must be from 1 to 1000000") }
        guard (1_024...(1 << 30)).contains(options.maximumBytes) else { throw .invalidConfiguration("maximumBytes must be from 1 KiB to 1 GiB") }
        guard (1...10_000).contains(options.pauseAfterAuthenticationFailures) else { throw .invalidConfiguration("pauseAfterAuthenticationFailures must be from 1 to 10000") }
        guard (1...1_000).contains(options.maximumAttempts) else { throw .invalidConfiguration("maximumAttempts must be from 1 to 1000") }
        guard options.maximumAge.isFinite, (60...(365 * 86_400)).contains(options.maximumAge) else {
            throw .invalidConfiguration("maximumAge must be from 60 seconds to 365 days")
        }
        guard HeaderFieldRules.isValidName(options.idempotencyHeaderName) else { throw .invalidConfiguration("idempotencyHeaderName must be an HTTP field name") }
        guard !HeaderFieldRules.isTransportOwnedName(options.idempotencyHeaderName) else {
            throw .invalidConfiguration("idempotencyHeaderName \(LogText.escaped(options.idempotencyHeaderName, limit: 64)) is a header the transport owns (framing, hop-by-hop, cookie or proxy)")
        }
        try Self.checkHeaderRoles(options.idempotencyHeaderName, authentication: authentication, client: client)
        do {
            _ = try options.backoff.validated()
        } catch {
            throw .invalidConfiguration(error.message)
        }
        self.name = name
        self.directory = directory
        self.options = options
        self.authentication = authentication
        self.client = client
        self.clock = clock
        self.alarms = Alarms(clock: clock)
        self.diagnostics = diagnostics
        self.random = random
        self.onUndeliverable = onUndeliverable
        let openedAt = (uptime: clock.monotonicNow(), wall: clock.now())
        self.bootSession = bootSession
        journal = try RequestJournalFile(
            directory: directory, name: name,
            limits: .init(maximumEntries: options.maximumEntries, maximumBytes: options.maximumBytes),
            diagnostics: diagnostics
        ) { entry in
            // A request marked in this boot keeps its mark: the monotonic clock still counts from it.
            // One marked in an earlier boot (or never) is marked again with the age it has now, so
            // what was counted survives later launches whatever the wall clock does meanwhile.
            if let mark = entry.mark, !bootSession.isEmpty, mark.boot == bootSession, openedAt.uptime >= mark.uptime { return nil }
            let age = Self.age(of: entry, wall: openedAt.wall, uptime: openedAt.uptime, boot: bootSession)
            return AgeMark(counted: age, wall: openedAt.wall, uptime: openedAt.uptime, boot: bootSession)
        }
        // Every reloaded request ages on the monotonic clock from the age it has now.
        let reloadedAt = Dictionary(uniqueKeysWithValues: journal.liveEntries.map { entry in
            (entry.id, openedAt.uptime - Self.age(of: entry, wall: openedAt.wall, uptime: openedAt.uptime, boot: bootSession))
        })
        let found = journal.recovery
        recovery = Recovery(recoveredCount: found.entries, inDoubt: found.inDoubt, unreadableBytes: found.unreadableBytes, unrecognizedFile: found.unrecognizedFile)
        let observation = authentication.observeSignatureChanges { [weak self] user in self?.signatureChanged(for: user) }
        state.withLock { $0.queuedAt = reloadedAt }
        subscription.withLock { $0 = observation }
        let task = Task { [weak self] () async -> Void in
            guard let self else { return }
            await self.run()
        }
        sender.withLock { $0 = task }
    }

    /// The idempotency header has a role of its own: it is never `Authorization`, nor the header of
    /// the signature or of another credential the client's providers send (compared case-insensitively).
    private static func checkHeaderRoles(_ idempotencyHeaderName: String, authentication: SignatureAuthentication, client: AuthorizedHTTPClient) throws(SignatureQueueError) {
        let name = idempotencyHeaderName.lowercased()
        guard name != "authorization" else {
            throw .invalidConfiguration("idempotencyHeaderName must not be Authorization: that header carries credentials")
        }
        var credentialHeaders = [authentication.headerName]
        let authorizer = client.authorizer
        for scheme in authorizer.policy.schemesInUse {
            switch authorizer.provider(for: scheme) {
            case let signatures as SignatureAuthentication: credentialHeaders.append(signatures.headerName)
            case let tokens as RefreshingTokenProvider: if let header = tokens.options.headerName { credentialHeaders.append(header) }
            default: break
            }
        }
        if credentialHeaders.contains(where: { $0.lowercased() == name }) {
            throw .invalidConfiguration("idempotencyHeaderName \(LogText.escaped(idempotencyHeaderName, limit: 64)) is the header of a signature or credential; each header has one role")
        }
    }

    public var description: String {
        "SignatureRequestQueue(\(LogText.escaped(name)), \(count) queued\(isPaused ? ", paused" : ""))"
    }

    public var customMirror: Mirror { Mirror(self, children: ["description": description], displayStyle: .class) }

    // MARK: Queueing

    /// Queues `request` for the current user (none when there is no current user); returns once it
    /// is on disk.
    ///
    /// - Returns: The request's queue ID, also its idempotency key.
    /// - Throws: ``SignatureQueueError``; the request is then not queued.
    @discardableResult
    public func enqueue(_ request: OutgoingRequest) async throws(SignatureQueueError) -> UUID {
        try await enqueue(request, forUser: authentication.currentUserId)
    }

    /// Queues `request` for `userId` (`nil`: an anonymous request, sent without a signature).
    ///
    /// - Returns: The request's queue ID, also its idempotency key.
    /// - Throws: ``SignatureQueueError``; the request is then not queued.
    @discardableResult
    public func enqueue(_ request: OutgoingRequest, forUser userId: String?) async throws(SignatureQueueError) -> UUID {
        if let userId {
            do {
                try SignatureAuthentication.check(userId: userId)
            } catch {
                throw .entryTooLarge(error.message)
            }
        }
        var request = request
        request.removeHeader(options.idempotencyHeaderName)
        let queuedAt = clock.monotonicNow()
        let wall = clock.now()
        let entry = QueuedEntry(
            id: UUID(), enqueuedAt: wall, userId: userId, request: request,
            mark: AgeMark(counted: 0, wall: wall, uptime: queuedAt, boot: bootSession)
        )
        // Set before the sender can see the entry; forgotten when the append fails.
        state.withLock { $0.queuedAt[entry.id] = queuedAt }
        do {
            try await journal.append(entry)
        } catch {
            state.withLock { _ = $0.queuedAt.removeValue(forKey: entry.id) }
            throw error
        }
        wake()
        return entry.id
    }

    /// Removes every queued request of `userId` (`nil`: the anonymous ones; user IDs are compared
    /// as exact bytes, so a canonically equivalent spelling is another user), at logout for
    /// instance: they are marked finished in the file, all in one write, and never sent. One of them
    /// being sent at that moment may still reach the server, but is not retried. Requests queued
    /// for the user once this call has begun are kept. The user's lane starts afresh: no backoff,
    /// no pause.
    ///
    /// - Returns: How many requests were removed (the one being sent included).
    /// - Throws: ``SignatureQueueError``: ``SignatureQueueError/Code/storageFailed`` when the write
    ///   failed (then none is removed), ``SignatureQueueError/Code/closed``.
    @discardableResult
    public func removeRequests(forUser userId: String?) async throws(SignatureQueueError) -> Int {
        let lane = userId.map(UserKey.init)
        let ids = state.withLock { state -> [UUID]? in
            guard !state.closed else { return nil }
            state.removing[lane, default: 0] += 1
            return journal.ids(forUser: userId)
        }
        guard let ids else { throw .closed }
        let failure: SignatureQueueError?
        do {
            try await journal.markDone(ids)
            failure = nil
        } catch {
            failure = error
        }
        state.withLock { state in
            if let count = state.removing[lane], count > 1 { state.removing[lane] = count - 1 } else { state.removing[lane] = nil }
            guard failure == nil else { return }
            state.lanes[lane] = nil
            for id in ids {
                state.unanswered.remove(id)
                state.queuedAt[id] = nil
            }
        }
        wake()
        if let failure { throw failure }
        if !ids.isEmpty {
            diagnostics.log(.info, "Request queue \(LogText.escaped(name)): \(ids.count) requests of one user removed; they are not sent")
        }
        return ids.count
    }

    /// How many requests wait to be sent.
    public var count: Int { journal.count }

    /// Whether some user's retries are paused after too many consecutive authentication failures.
    public var isPaused: Bool { state.withLock { $0.lanes.values.contains { $0.paused } } }

    /// Sends now, ignoring every lane's backoff and pause, until the queue is empty or a request
    /// fails.
    ///
    /// - Returns: How many requests are still queued when the pass ends.
    @discardableResult
    public func flush() async -> Int {
        await withCheckedContinuation { continuation in
            enum Next { case closed, joinRunningPass, wake }
            let next = state.withLock { state -> Next in
                if state.closed { return .closed }
                state.flushWaiters.append(continuation)
                // A pass that is sending now is the flush: it ends when the queue is empty or a request fails.
                guard state.parked else { return .joinRunningPass }
                state.flushRequested = true
                return .wake
            }
            switch next {
            case .closed: continuation.resume(returning: journal.count)
            case .joinRunningPass: break
            case .wake: wake()
            }
        }
    }

    /// Returns once every request given up before the call has been handed to `onUndeliverable`.
    ///
    /// `onUndeliverable` runs off the sender, so ``flush()`` may return before it has been called
    /// for the requests that pass gave up; await this before checking what it received.
    public func undeliverableDelivered() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            undeliverableDeliveries.async { continuation.resume() }
        }
    }

    /// Returns once the sender has nothing to do before its next wake-up: the queue is empty, or
    /// every lane is paused, waits for a signature or for a time that has not come; then, unless
    /// `deliveries` is false, once `onUndeliverable` has been called for every request given up so
    /// far. For tests on a manual clock.
    ///
    /// - Returns: How many requests are queued.
    func waitUntilIdle(deliveries: Bool = true) async -> Int {
        let count = await waitUntilSenderIdle()
        if deliveries { await undeliverableDelivered() }
        return count
    }

    private func waitUntilSenderIdle() async -> Int {
        await withCheckedContinuation { continuation in
            let now = clock.monotonicNow()
            let idle = state.withLock { state -> Bool in
                let timerDue = state.parkedUntil.map { $0 <= now } ?? false
                if state.closed || (state.parked && !state.wakeSignal && !state.flushRequested && !timerDue) { return true }
                state.flushWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume(returning: journal.count) }
        }
    }

    /// How many callers of ``flush()`` and ``waitUntilIdle()`` wait; for tests.
    var pendingFlushCount: Int { state.withLock { $0.flushWaiters.count } }

    /// A new session began: lifts every user's pause after too many authentication failures and
    /// sends now (a lane that waits for its user's signature still waits for it).
    public func startSession() {
        state.withLock { state in
            for (user, var lane) in state.lanes {
                lane.paused = false
                lane.consecutiveAuthenticationFailures = 0
                lane.nextAttempt = lane.retryAfterUntil
                state.lanes[user] = lane
            }
        }
        wake()
    }

    /// Stops sending and closes the file: the requests stay in it for the next queue with this name.
    /// A request being sent finishes first.
    public func close() async {
        let (task, waiters) = state.withLock { state -> (Task<Void, Never>?, [CheckedContinuation<Int, Never>]) in
            state.closed = true
            defer { state.flushWaiters = [] }
            return (sender.withLock { $0 }, state.flushWaiters)
        }
        wake()
        await task?.value
        subscription.withLock { $0?.cancel() }
        await journal.close()
        for waiter in waiters { waiter.resume(returning: journal.count) }
    }

    // MARK: Sending

    private enum Outcome {
        case sent
        case authenticationFailure(RequestError)
        case transientFailure(RequestError)
        case undeliverable(RequestError)
        /// The attempt could not be recorded in the file, so it was not made.
        case notSent(RequestError)
    }

    private enum Action {
        case send(QueuedEntry)
        case giveUp(QueuedEntry, Undeliverable.Reason, RequestError)
    }

    private func run() async {
        while true {
            switch await nextAction() {
            case nil:
                return
            case .send(let entry)?:
                let signature = entry.userId.flatMap(authentication.signature(for:))
                let outcome = await send(entry, signature: signature)
                await record(outcome, for: entry, sentWith: signature)
            case .giveUp(let entry, let reason, let error)?:
                await giveUp(entry, reason: reason, error: error)
            }
        }
    }

    /// Waits until a request may be sent, or one is to be given up; `nil` once the queue is closed.
    ///
    /// The candidates are the oldest request of each lane, oldest first: the first that is over a
    /// limit is given up, otherwise the first whose lane may send now is sent.
    private func nextAction() async -> Action? {
        while true {
            enum Decision { case act(Action), wait(TimeInterval?), stop }
            let now = clock.monotonicNow()
            let (decision, finishedFlushes) = state.withLock { state -> (Decision, [CheckedContinuation<Int, Never>]) in
                if state.closed { return (.stop, []) }
                var wakeAt: TimeInterval?
                for head in journal.laneHeads where state.removing[head.lane] == nil {
                    let lane = state.lanes[head.lane]
                    let remaining = options.maximumAge - age(of: head, now: now, in: state)
                    // Within a millisecond is over: a timer that fires a rounding error early must not spin.
                    if remaining <= 0.001 { return (.act(.giveUp(head, .tooOld, tooOldError(head, lane: lane))), []) }
                    if answeredAttempts(of: head.id, in: state) >= options.maximumAttempts {
                        return (.act(.giveUp(head, .tooManyAttempts, lastFailure(of: head, lane: lane) ?? Self.cutShort)), [])
                    }
                    if state.flushRequested { return (.act(.send(head)), []) }
                    var until = now + remaining
                    if let lane, lane.paused || lane.needsSignature {
                        // Waits for a session, a flush or a signature; only its age wakes it.
                    } else if let next = lane?.nextAttempt, next > now {
                        until = min(until, next)
                    } else {
                        return (.act(.send(head)), [])
                    }
                    wakeAt = min(wakeAt ?? until, until)
                }
                state.flushRequested = false
                state.parked = true
                state.parkedUntil = wakeAt
                // A wake-up already pending sends the loop round again: answer the waiters next time.
                guard !state.wakeSignal else { return (.wait(wakeAt), []) }
                defer { state.flushWaiters = [] }
                return (.wait(wakeAt), state.flushWaiters)
            }
            let remaining = journal.count
            for waiter in finishedFlushes { waiter.resume(returning: remaining) }
            switch decision {
            case .act(let action): return action
            case .stop: return nil
            case .wait(let deadline): await waitForWake(until: deadline)
            }
        }
    }

    /// How long `entry` has been queued, at monotonic time `now`: counted on the monotonic clock
    /// within this launch, so a wall clock set forward (or back) does not age it; a request reloaded
    /// from the file brings the age the wall clock gave it when the queue opened (never less than 0).
    private func age(of entry: QueuedEntry, now: TimeInterval, in state: State) -> TimeInterval {
        if let queuedAt = state.queuedAt[entry.id] { return now - queuedAt }
        return Self.age(of: entry, wall: clock.now(), uptime: now, boot: bootSession)
    }

    /// The age of `entry` when the clocks say `wall` and `uptime` in boot session `boot`: from its
    /// age mark, or (a file written before marks were kept) from its enqueue time on the wall clock.
    private static func age(of entry: QueuedEntry, wall: Date, uptime: TimeInterval, boot: [UInt8]) -> TimeInterval {
        entry.mark?.age(wall: wall, uptime: uptime, boot: boot) ?? AgeMark.wallInterval(from: entry.enqueuedAt, to: wall)
    }

    /// The attempts of `id` the server answered: those begun (its `sending` records) but the last
    /// one when it got no answer.
    private func answeredAttempts(of id: UUID, in state: State) -> Int {
        journal.attempts(of: id) - (state.unanswered.contains(id) ? 1 : 0)
    }

    private func lastFailure(of entry: QueuedEntry, lane: Lane?) -> RequestError? {
        guard let last = lane?.lastFailure, last.id == entry.id else { return nil }
        return last.error
    }

    /// The error of a request over its maximum attempts whose last failure this queue did not see.
    private static let cutShort = RequestError(.transportFailed, "The request's last attempt was under way when the queue last stopped; no answer was seen", wasSent: true)

    private func tooOldError(_ entry: QueuedEntry, lane: Lane?) -> RequestError {
        let last = lastFailure(of: entry, lane: lane)
        return RequestError(
            .deadlineExceeded, "The request was queued more than \(Int(options.maximumAge)) seconds ago, its maximum age, without being delivered",
            wasSent: journal.attempts(of: entry.id) > 0, response: last?.response, underlyingError: last
        )
    }

    private func send(_ entry: QueuedEntry, signature: String?) async -> Outcome {
        // After an attempt that got no answer, its `sending` record stands for this one too.
        if !state.withLock({ $0.unanswered.contains(entry.id) }) {
            do {
                try await journal.markSending(entry.id)
            } catch {
                diagnostics.log(.error, "Request queue \(LogText.escaped(name)): \(error.description); the request stays queued")
                return .notSent(.transportFailed(error))
            }
        }
        var request = entry.request
        request.setHeader(options.idempotencyHeaderName, entry.id.uuidString)
        let pinned = SignatureAuthentication.Pinned(userId: entry.userId, signature: signature)
        do {
            // An optional-enforcement report in the answer reaches the subscribers through the
            // provider (``SignatureAuthentication/credentialAccepted(_:response:context:)``), as on every path.
            _ = try await SignatureAuthentication.$pinned.withValue(pinned) { () async throws(RequestError) -> ServerResponse in
                try await client.send(request)
            }
            return .sent
        } catch let error as RequestError {
            return classify(error, entry: entry, signature: signature)
        } catch {
            return .transientFailure(.transportFailed(error))
        }
    }

    private func classify(_ error: RequestError, entry: QueuedEntry, signature: String?) -> Outcome {
        switch error.code {
        case .authorizationRejected, .refreshWindowExceeded:
            if let failure = SignatureFailure.reported(in: error.body, signature: signature, requestUser: entry.userId) {
                // A request without a signature is not reported by the provider (it issued none).
                authentication.publish(failure)
            } else if signature == nil, let user = entry.userId {
                // Refused without saying why, and the user has no signature: that is why.
                authentication.publish(SignatureFailure(
                    errorCode: .missingToken, reason: "The request was sent without a signature: its user has none (signatures are kept in memory only)",
                    userId: user, signature: nil, optional: false
                ))
            }
            return .authenticationFailure(error)
        case .httpError:
            let status = error.statusCode ?? 0
            return status == 408 || status == 429 || status >= 500 ? .transientFailure(error) : .undeliverable(error)
        case .invalidHeader, .invalidURL, .unknownEndpoint, .redirectRefused, .tooManyRedirects, .invalidCredential:
            return .undeliverable(error)
        default:
            return .transientFailure(error)
        }
    }

    private func record(_ outcome: Outcome, for entry: QueuedEntry, sentWith signature: String?) async {
        // Removed while it was being sent (removeRequests): not recorded, and not retried.
        guard journal.contains(entry.id) else {
            state.withLock { _ = $0.unanswered.remove(entry.id) }
            return
        }
        switch outcome {
        case .sent:
            await finish(entry)
            state.withLock { state in
                // A request that goes through ends the lane's failures, and its pause.
                state.lanes[entry.lane] = nil
                state.unanswered.remove(entry.id)
            }
        case .undeliverable(let error):
            await giveUp(entry, reason: .refused, error: error)
            state.withLock { state in
                state.lanes[entry.lane]?.nextAttempt = nil
                state.lanes[entry.lane]?.waitingForSignature = false
            }
        case .authenticationFailure(let error):
            await failed(entry, error: error, authentication: true, attempted: true, sentWith: signature)
        case .transientFailure(let error):
            await failed(entry, error: error, authentication: false, attempted: true, sentWith: signature)
        case .notSent(let error):
            await failed(entry, error: error, authentication: false, attempted: false, sentWith: signature)
        }
    }

    /// A failed attempt (or one that could not be made): the lane backs off, or waits for a
    /// signature, a session or a `Retry-After`; the request is given up at its attempt limit.
    private func failed(_ entry: QueuedEntry, error: RequestError, authentication isAuthenticationFailure: Bool, attempted: Bool, sentWith signature: String?) async {
        let draw = random()
        let now = clock.monotonicNow()
        let answered = attempted && error.response != nil
        // A signature that arrived while the request was being sent is tried at once.
        let newSignature = isAuthenticationFailure && entry.userId.flatMap(authentication.signature(for:)) != signature
        let retryAfter = error.response?.value(forHeader: "Retry-After")
            .flatMap { RetryAfter.seconds(in: $0, now: clock.now()) }
            .map { min(max($0, options.backoff.minimum), max(options.backoff.maximum, Self.retryAfterCap)) }
        let (delay, paused, unsigned, overLimit) = state.withLock { state -> (TimeInterval, Bool, Bool, Bool) in
            state.flushRequested = false
            if answered {
                state.unanswered.remove(entry.id)
            } else if attempted {
                state.unanswered.insert(entry.id)
            }
            var lane = state.lanes[entry.lane] ?? Lane()
            defer { state.lanes[entry.lane] = lane }
            lane.lastFailure = (entry.id, error)
            lane.consecutiveFailures += 1
            if isAuthenticationFailure {
                lane.consecutiveAuthenticationFailures += 1
                lane.waitingForSignature = true
                lane.needsSignature = signature == nil && entry.userId != nil && !newSignature
                if lane.consecutiveAuthenticationFailures >= options.pauseAfterAuthenticationFailures { lane.paused = true }
            } else {
                lane.waitingForSignature = false
                lane.needsSignature = false
            }
            let delay = retryAfter ?? options.backoff.delay(afterFailures: lane.consecutiveFailures, random: draw)
            lane.retryAfterUntil = retryAfter.map { now + $0 }
            lane.nextAttempt = newSignature ? lane.retryAfterUntil : now + delay
            let overLimit = answered && answeredAttempts(of: entry.id, in: state) >= options.maximumAttempts
            return (newSignature ? lane.retryAfterUntil.map { $0 - now } ?? 0 : delay, lane.paused, lane.needsSignature, overLimit)
        }
        if overLimit {
            await giveUp(entry, reason: .tooManyAttempts, error: error)
            return
        }
        let prefix = "Request queue \(LogText.escaped(name)):"
        let wait = "\(Int(delay.rounded())) s\(retryAfter == nil ? "" : " (Retry-After)")"
        if paused {
            diagnostics.log(.warning, "\(prefix) \(options.pauseAfterAuthenticationFailures) consecutive authentication failures of one user's requests; that user's retries pause until the next session or a flush")
        } else if unsigned {
            diagnostics.log(.info, "\(prefix) a request sent without a signature (its user has none) was refused; that user's requests wait for a signature")
        } else if !isAuthenticationFailure {
            diagnostics.log(.info, "\(prefix) \(error.description); next attempt in \(wait)")
        } else if newSignature {
            diagnostics.log(.info, "\(prefix) authentication failed; a new signature arrived meanwhile, trying it \(retryAfter == nil ? "now" : "in \(wait)")")
        } else {
            diagnostics.log(.info, "\(prefix) authentication failed; next attempt in \(wait) or when the user's signature changes")
        }
    }

    /// Removes `entry` and reports it: logged at error level (never a signature) and handed to `onUndeliverable`.
    private func giveUp(_ entry: QueuedEntry, reason: Undeliverable.Reason, error: RequestError) async {
        let why = switch reason {
        case .tooManyAttempts: "failed \(options.maximumAttempts) attempts, its maximum, and is removed"
        case .tooOld: "was queued more than \(Int(options.maximumAge)) s ago, its maximum age, and is removed"
        default: "cannot be delivered and is removed"
        }
        diagnostics.log(.error, "Request queue \(LogText.escaped(name)): request \(entry.id.uuidString) \(why): \(error.description)")
        await finish(entry)
        if let onUndeliverable {
            let undeliverable = Undeliverable(id: entry.id, userId: entry.userId, error: error, reason: reason)
            undeliverableDeliveries.async { onUndeliverable(undeliverable) }
        }
        state.withLock { state in
            state.unanswered.remove(entry.id)
            if state.lanes[entry.lane]?.lastFailure?.id == entry.id { state.lanes[entry.lane]?.lastFailure = nil }
        }
    }

    /// Marks `entry` finished in the file; when that fails, forgets it in memory only.
    private func finish(_ entry: QueuedEntry) async {
        defer { state.withLock { _ = $0.queuedAt.removeValue(forKey: entry.id) } }
        do {
            try await journal.markDone(entry.id)
        } catch {
            journal.forget(entry.id)
            diagnostics.log(.error, "Request queue \(LogText.escaped(name)): \(error.description); request \(entry.id.uuidString) may be sent again after a restart")
        }
    }

    /// A new signature for `user`: a lane waiting for one after an authentication failure retries
    /// now (not before a `Retry-After`, and not while paused).
    private func signatureChanged(for user: String) {
        let key: UserKey? = UserKey(user)
        let retry = state.withLock { state -> Bool in
            guard var lane = state.lanes[key] else { return false }
            defer { state.lanes[key] = lane }
            let waiting = lane.waitingForSignature || lane.needsSignature
            lane.needsSignature = false
            guard waiting, !lane.paused else { return false }
            lane.waitingForSignature = false
            lane.nextAttempt = lane.retryAfterUntil
            return true
        }
        if retry { wake() }
    }

    // MARK: Waking

    private func waitForWake(until deadline: TimeInterval?) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.wakeSignal || state.closed {
                    state.wakeSignal = false
                    state.parked = false
                    return true
                }
                state.waiter = continuation
                if let deadline {
                    state.timer = alarms.schedule(at: deadline) { [weak self] in self?.wake() }
                }
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    private func wake() {
        let (waiter, timer) = state.withLock { state -> (CheckedContinuation<Void, Never>?, Alarms.Alarm?) in
            defer {
                state.waiter = nil
                state.timer = nil
            }
            state.parked = false
            if state.waiter == nil { state.wakeSignal = true }
            return (state.waiter, state.timer)
        }
        if let timer { alarms.cancel(timer) }
        waiter?.resume()
    }
}
