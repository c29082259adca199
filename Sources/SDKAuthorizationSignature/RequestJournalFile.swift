import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SDKAuthorization
import SDKAuthorizationModeKit

/// The request queue's file: the journal on disk, its live entries in memory (in order, and by
/// user: each user's entries are a lane of their own), how many attempts each has begun, durable
/// appends shared by concurrent callers (one write and one flush for all callers waiting at that
/// moment), and compaction.
///
/// An entry's attempts are its `sending` records: compaction and recovery keep them (one per
/// attempt, after the entry's record), so the count survives a relaunch.
///
/// Every file operation runs on one serial dispatch queue, off the cooperative thread pool; an
/// append returns only after its bytes were flushed to the disk.
final class RequestJournalFile: Sendable {
    struct Limits: Sendable {
        var maximumEntries: Int
        var maximumBytes: Int
    }

    struct Recovery: Sendable {
        var entries: Int
        var inDoubt: [UUID]
        var unreadableBytes: Int
        var unreadableOffset: Int
        var unrecognizedFile: Bool
    }

    struct Pending {
        let bytes: [UInt8]
        let apply: @Sendable (inout State) -> Void
        let undo: @Sendable (inout State) -> Void
        let continuation: CheckedContinuation<Result<Void, SignatureQueueError>, Never>
    }

    /// One user's live entries, oldest first: the ones before ``head`` are finished.
    struct Lane {
        /// Entry IDs with the position they were queued at (across every lane).
        var ids: [(sequence: Int, id: UUID)] = []
        var head = 0
    }

    struct State {
        var descriptor: Int32
        var lockDescriptor: Int32 = -1
        var entries: [UUID: QueuedEntry] = [:]
        var sizes: [UUID: Int] = [:]
        var order: [UUID] = []
        var head = 0
        var liveBytes = 0
        /// The live entries of each user (`nil`: anonymous ones); a lane with none is removed.
        var lanes: [UserKey?: Lane] = [:]
        var nextSequence = 0
        /// How many `sending` records each live entry has, and their bytes in the file.
        var attempts: [UUID: Int] = [:]
        var attemptBytes = 0
        var reservedEntries = 0
        var reservedBytes = 0
        /// The length of the header and the whole records: where the file ends when no write failed.
        var fileBytes = 0
        /// A failed write may have left part of a record past ``fileBytes`` that could not be cut away
        /// yet: nothing is appended until it is.
        var tornTail = false
        var pending: [Pending] = []
        var drainScheduled = false
        var closed = false

        var count: Int { entries.count }

        mutating func insert(_ entry: QueuedEntry, size: Int) {
            guard entries[entry.id] == nil else { return }
            entries[entry.id] = entry
            sizes[entry.id] = size
            order.append(entry.id)
            liveBytes += size
            lanes[entry.lane, default: Lane()].ids.append((nextSequence, entry.id))
            nextSequence += 1
        }

        /// Counts an attempt of `id` whose `sending` record is on disk.
        mutating func countAttempt(_ id: UUID) {
            guard entries[id] != nil else { return }
            attempts[id, default: 0] += 1
            attemptBytes += JournalCodec.sendingRecordLength
        }

        mutating func remove(_ id: UUID) {
            guard let entry = entries.removeValue(forKey: id) else { return }
            liveBytes -= sizes.removeValue(forKey: id) ?? 0
            if let count = attempts.removeValue(forKey: id) { attemptBytes -= count * JournalCodec.sendingRecordLength }
            while head < order.count, entries[order[head]] == nil { head += 1 }
            if head > 1_024, head * 2 > order.count {
                order.removeFirst(head)
                head = 0
            }
            guard var lane = lanes[entry.lane] else { return }
            while lane.head < lane.ids.count, entries[lane.ids[lane.head].id] == nil { lane.head += 1 }
            if lane.head == lane.ids.count {
                lanes[entry.lane] = nil
                return
            }
            if lane.head > 1_024, lane.head * 2 > lane.ids.count {
                lane.ids.removeFirst(lane.head)
                lane.head = 0
            }
            lanes[entry.lane] = lane
        }

        /// The live entries in the order they were queued, each followed by its attempts.
        var liveRecords: (entries: [QueuedEntry], attempts: [UUID: Int]) {
            (order[head...].compactMap { entries[$0] }, attempts)
        }

        var first: QueuedEntry? {
            var index = head
            while index < order.count {
                if let entry = entries[order[index]] { return entry }
                index += 1
            }
            return nil
        }
    }

    /// The `write(2)` the journal calls: a seam for tests that cut a write short, the way a full
    /// disk or a file-size limit does.
    struct Writer: Sendable {
        /// Writes up to `count` bytes; returns how many, or -1 with `errno` set.
        let write: @Sendable (_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int

        static let system = Writer { descriptor, bytes, count in posixWrite(descriptor, bytes, count) }
    }

    let fileURL: URL
    let limits: Limits
    let recovery: Recovery
    private let writer: Writer
    private let ioQueue = DispatchQueue(label: "SDKAuthorization.RequestJournalFile")
    private let state: Locked<State>

    /// Opens (creating when missing) the journal `name` in `directory`, recovering what it holds.
    ///
    /// The path is not trusted: a directory other users can write is refused (not repaired: an SDK
    /// should not change the permissions of a directory the app chose), and so are a journal or lock
    /// file that is a symbolic link (nothing is read, written or chmod-ed through it) or not a
    /// regular file (a FIFO is refused without blocking on it).
    ///
    /// `remark` may give a reloaded entry a new age mark; when it does for any entry, the file is
    /// rewritten with the new marks, so what was counted survives the next launch.
    init(
        directory: URL, name: String, limits: Limits, diagnostics: any DiagnosticsSink, writer: Writer = .system,
        remark: (QueuedEntry) -> AgeMark? = { _ in nil }
    ) throws(SignatureQueueError) {
        self.limits = limits
        self.writer = writer
        fileURL = directory.appendingPathComponent("\(name).queue")
        try Self.verifyDirectory(directory)
        // One process at a time: a second one gets queueInUse instead of interleaving records.
        let lockPath = directory.appendingPathComponent("\(name).lock").path
        let lock = try Self.openRegularFile(lockPath, flags: O_CREAT | O_RDWR, what: "the queue's lock file")
        guard flock(lock, LOCK_EX | LOCK_NB) == 0 else {
            posixClose(lock)
            throw .queueInUse(name: name)
        }

        // Read through the descriptor that later appends use, so the file read is the file written.
        let bytes: [UInt8]
        let wholeFile: Bool
        let existing: Int32
        do {
            existing = try Self.openRegularFile(fileURL.path, flags: O_RDWR | O_APPEND, what: "the queue file")
        } catch {
            Self.unlockAndClose(lock)
            throw error
        }
        do {
            (bytes, wholeFile) = existing < 0 ? ([], true) : try Self.readAll(existing, limit: limits.maximumBytes * 2 + JournalCodec.maximumRecordLength * 2)
        } catch {
            posixClose(existing)
            Self.unlockAndClose(lock)
            throw error
        }
        let decoded = JournalCodec.decode(bytes)
        var recovered = State(descriptor: -1)
        var sending: Set<UUID> = []
        var remarked = false
        for (record, size) in zip(decoded.records, decoded.sizes) {
            switch record {
            case .entry(var entry):
                // A new mark makes the record longer (its boot session may too): one the reader
                // would refuse keeps its old mark (its age is then read from the wall clock again).
                if let mark = remark(entry), let remarkedBytes = JournalCodec.encodeReadable(QueuedEntry(
                    id: entry.id, enqueuedAt: entry.enqueuedAt, userId: entry.userId, request: entry.request, mark: mark
                )) {
                    entry.mark = mark
                    remarked = true
                    recovered.insert(entry, size: remarkedBytes.count)
                } else {
                    recovered.insert(entry, size: size)
                }
            case .sending(let id):
                if recovered.entries[id] != nil {
                    sending.insert(id)
                    recovered.countAttempt(id)
                }
            case .done(let id):
                recovered.remove(id)
                sending.remove(id)
            }
        }
        let inDoubt = recovered.order[recovered.head...].filter { sending.contains($0) && recovered.entries[$0] != nil }
        recovery = Recovery(
            entries: recovered.count,
            inDoubt: inDoubt,
            unreadableBytes: decoded.unreadableBytes(of: bytes.count),
            unreadableOffset: decoded.skipped.first?.offset ?? decoded.validLength,
            unrecognizedFile: !decoded.headerValid
        )
        if !decoded.headerValid {
            // Not our format (or a damaged header): kept aside for inspection, never overwritten.
            let aside = directory.appendingPathComponent("\(name).queue.unrecognized-\(Int(Date().timeIntervalSince1970))")
            _ = rename(fileURL.path, aside.path)
            diagnostics.log(.error, "Request queue \(LogText.escaped(name)): the file does not start with the queue header; moved aside to \(LogText.escaped(aside.lastPathComponent)) and started empty")
        } else if recovery.unreadableBytes > 0 || !wholeFile {
            // A write cut short is only the start of a request whose enqueue never returned. Damage,
            // or a file longer than this queue reads, is kept aside for inspection before the rewrite:
            // the skipped records, then the unread tail.
            var kept = ""
            let tailIsDamage = decoded.validLength < bytes.count && !decoded.tornTail
            if !decoded.skipped.isEmpty || tailIsDamage || !wholeFile {
                let aside = directory.appendingPathComponent("\(name).queue.damaged-\(Int(Date().timeIntervalSince1970))")
                if !wholeFile {
                    _ = rename(fileURL.path, aside.path)
                } else {
                    var unread: [UInt8] = []
                    for record in decoded.skipped { unread += bytes[record.offset..<(record.offset + record.length)] }
                    if tailIsDamage { unread += bytes[decoded.validLength...] }
                    _ = try? Self.rewriteRaw(aside, bytes: unread)
                }
                kept = "; the unread bytes are kept in \(LogText.escaped(aside.lastPathComponent))"
            }
            // Where each unread part is and why, never what it holds: a request may carry secrets.
            var parts = decoded.skipped.prefix(10).map { "the record of \($0.length) bytes at offset \($0.offset) \($0.reason) and was skipped" }
            if decoded.skipped.count > 10 { parts.append("\(decoded.skipped.count - 10) more records were skipped") }
            if decoded.validLength < bytes.count || !wholeFile {
                let what = wholeFile ? (decoded.tornTail ? "are a write cut short" : "are damaged") : "are past what the queue reads"
                parts.append("\(bytes.count - decoded.validLength) bytes from offset \(decoded.validLength) \(what) and could not be read")
            }
            diagnostics.log(.error, "Request queue \(LogText.escaped(name)): \(parts.joined(separator: "; ")); \(recovery.unreadableBytes) bytes in all could not be read, \(recovery.entries) entries were recovered\(kept)")
        }
        if !inDoubt.isEmpty {
            diagnostics.log(.warning, "Request queue \(LogText.escaped(name)): \(inDoubt.count) entries were being sent when the queue last stopped; they are sent again with the same Idempotency-Key: \(inDoubt.map(\.uuidString).joined(separator: ", "))")
        }
        if recovery.entries > 0 {
            diagnostics.log(.info, "Request queue \(LogText.escaped(name)): \(recovery.entries) entries recovered")
        }
        // A file holding only its live entries (and their attempts) is appended to as it is; any
        // other is rewritten with the live entries and their attempts only: no dead records, no
        // damaged tail.
        let liveRecordCount = recovered.count + recovered.attemptBytes / JournalCodec.sendingRecordLength
        let clean = decoded.headerValid && !bytes.isEmpty && wholeFile && recovery.unreadableBytes == 0 && decoded.records.count == liveRecordCount && !remarked
        do throws(SignatureQueueError) {
            if clean {
                // The descriptor opened without following a link: the chmod cannot reach another file.
                _ = fchmod(existing, 0o600)
                recovered.descriptor = existing
            } else {
                if existing >= 0 { posixClose(existing) }
                let live = recovered.liveRecords
                recovered.descriptor = try Self.rewrite(fileURL, entries: live.entries, attempts: live.attempts).descriptor
            }
        } catch {
            Self.unlockAndClose(lock)
            throw error
        }
        recovered.fileBytes = JournalCodec.header.count + recovered.liveBytes + recovered.attemptBytes
        recovered.lockDescriptor = lock
        state = Locked(recovered)
    }

    deinit {
        let (descriptor, lock) = state.withLock { state -> (Int32, Int32) in
            defer { state.descriptor = -1; state.lockDescriptor = -1 }
            return (state.descriptor, state.lockDescriptor)
        }
        if descriptor >= 0 { posixClose(descriptor) }
        if lock >= 0 { Self.unlockAndClose(lock) }
    }

    // MARK: Reading the live entries

    var count: Int { state.withLock(\.count) }
    var first: QueuedEntry? { state.withLock(\.first) }
    /// The live entries, in the order they were queued.
    var liveEntries: [QueuedEntry] { state.withLock { $0.liveRecords.entries } }

    /// Whether `id` is live (queued and not finished).
    func contains(_ id: UUID) -> Bool { state.withLock { $0.entries[id] != nil } }

    /// The oldest live entry of each lane, oldest first.
    var laneHeads: [QueuedEntry] {
        state.withLock { state in
            state.lanes.values.compactMap { lane -> (sequence: Int, entry: QueuedEntry)? in
                let (sequence, id) = lane.ids[lane.head]
                return state.entries[id].map { (sequence, $0) }
            }
            .sorted { $0.sequence < $1.sequence }
            .map(\.entry)
        }
    }

    /// The live entries of `userId`'s lane (the user compared as exact bytes), oldest first.
    func ids(forUser userId: String?) -> [UUID] {
        state.withLock { state in
            guard let lane = state.lanes[userId.map(UserKey.init)] else { return [] }
            return lane.ids[lane.head...].map(\.id).filter { state.entries[$0] != nil }
        }
    }

    /// How many attempts of `id` have begun: its `sending` records, kept across compaction and relaunches.
    func attempts(of id: UUID) -> Int { state.withLock { $0.attempts[id] ?? 0 } }

    // MARK: Writing

    /// Appends `entry`; returns once it is on disk.
    func append(_ entry: QueuedEntry) async throws(SignatureQueueError) {
        if let problem = JournalCodec.problem(with: entry) { throw .entryTooLarge(problem) }
        // What the reader would refuse is never written: a record it cannot read back is a request lost.
        guard let bytes = JournalCodec.encodeReadable(entry) else {
            throw .entryTooLarge("the request takes more than \(JournalCodec.maximumRecordLength) bytes in the queue's file")
        }
        let limits = self.limits
        let reserved = state.withLock { state -> SignatureQueueError? in
            if state.closed { return .closed }
            guard state.count + state.reservedEntries < limits.maximumEntries else { return .full(maximumEntries: limits.maximumEntries, maximumBytes: limits.maximumBytes) }
            guard state.liveBytes + state.reservedBytes + bytes.count <= limits.maximumBytes else { return .full(maximumEntries: limits.maximumEntries, maximumBytes: limits.maximumBytes) }
            state.reservedEntries += 1
            state.reservedBytes += bytes.count
            return nil
        }
        if let reserved { throw reserved }
        let size = bytes.count
        let result = await write(bytes) { state in
            state.reservedEntries -= 1
            state.reservedBytes -= size
            state.insert(entry, size: size)
        } undo: { state in
            state.reservedEntries -= 1
            state.reservedBytes -= size
        }
        try result.get()
    }

    /// Records that sending `id` begins (an attempt); returns once it is on disk.
    func markSending(_ id: UUID) async throws(SignatureQueueError) {
        try await write(JournalCodec.encode(.sending(id))) { state in state.countAttempt(id) }.get()
    }

    /// Forgets `id` in memory only, when its finish could not be recorded: this process does not
    /// send it again; after a restart it is reloaded and, having been sent, reported in doubt.
    func forget(_ id: UUID) {
        state.withLock { $0.remove(id) }
    }

    /// Records that `id` is finished (sent, or given up) and forgets it.
    func markDone(_ id: UUID) async throws(SignatureQueueError) {
        try await markDone([id])
    }

    /// Records that every one of `ids` is finished, in one write, and forgets them.
    func markDone(_ ids: [UUID]) async throws(SignatureQueueError) {
        guard !ids.isEmpty else { return }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(ids.count * JournalCodec.doneRecordLength)
        for id in ids { bytes.append(contentsOf: JournalCodec.encode(.done(id))) }
        try await write(bytes) { state in
            for id in ids { state.remove(id) }
        }.get()
    }

    /// Stops accepting writes (writes already queued are finished first), closes the file and
    /// releases the lock, so another queue may open it.
    func close() async {
        let (descriptor, lock) = await withCheckedContinuation { (continuation: CheckedContinuation<(Int32, Int32), Never>) in
            ioQueue.async {
                let descriptors = self.state.withLock { state -> (Int32, Int32) in
                    state.closed = true
                    defer { state.descriptor = -1; state.lockDescriptor = -1 }
                    return (state.descriptor, state.lockDescriptor)
                }
                continuation.resume(returning: descriptors)
            }
        }
        if descriptor >= 0 { posixClose(descriptor) }
        if lock >= 0 { Self.unlockAndClose(lock) }
    }

    /// The open descriptors of the queue file and of its lock file; for tests.
    var descriptors: (file: Int32, lock: Int32) {
        state.withLock { ($0.descriptor, $0.lockDescriptor) }
    }

    /// Releases the lock, then closes its descriptor.
    ///
    /// Every descriptor the journal opens is close-on-exec, but a child process being spawned by
    /// another thread holds a copy of it from its fork until its exec; an `flock` lock belongs to
    /// the open file, so closing only this copy would leave the file locked for that moment, and a
    /// queue reopened then would be refused as ``SignatureQueueError/queueInUse(name:)``. Unlocking
    /// first releases it whoever else holds a copy.
    private static func unlockAndClose(_ lock: Int32) {
        _ = flock(lock, LOCK_UN)
        posixClose(lock)
    }

    /// Queues `bytes` for the next drain; `apply` runs once they are on disk, `undo` when they
    /// could not be written.
    private func write(
        _ bytes: [UInt8],
        apply: @escaping @Sendable (inout State) -> Void,
        undo: @escaping @Sendable (inout State) -> Void = { _ in }
    ) async -> Result<Void, SignatureQueueError> {
        await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, SignatureQueueError>, Never>) in
            let schedule = state.withLock { state -> Bool? in
                if state.closed {
                    undo(&state)
                    return nil
                }
                state.pending.append(Pending(bytes: bytes, apply: apply, undo: undo, continuation: continuation))
                defer { state.drainScheduled = true }
                return !state.drainScheduled
            }
            switch schedule {
            case nil: continuation.resume(returning: .failure(.closed))
            case true?: ioQueue.async { self.drain() }
            case false?: break
            }
        }
    }

    /// Writes every pending record in one write and one flush, then applies and answers them all.
    ///
    /// A write cut short (a full disk, a file-size limit) or a failed flush leaves the file cut back
    /// to its last whole record before anything else is appended, so the part of a record it left
    /// can never hide the records written after it; every caller in the batch gets the failure.
    private func drain() {
        let (batch, descriptor, wholeLength, torn) = state.withLock { state -> ([Pending], Int32, Int, Bool) in
            defer {
                state.pending = []
                state.drainScheduled = false
            }
            return (state.pending, state.descriptor, state.fileBytes, state.tornTail)
        }
        guard !batch.isEmpty else { return }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(batch.reduce(0) { $0 + $1.bytes.count })
        for item in batch { bytes.append(contentsOf: item.bytes) }
        var failure: SignatureQueueError?
        var stillTorn = torn
        if descriptor < 0 {
            failure = .closed
        } else {
            if torn {
                failure = Self.cutBack(descriptor, to: wholeLength)
                stillTorn = failure != nil
            }
            if failure == nil, let writeFailure = Self.writeAll(descriptor, bytes, writer: writer) {
                let cutFailure = Self.cutBack(descriptor, to: wholeLength)
                stillTorn = cutFailure != nil
                failure = writeFailure
            }
        }
        state.withLock { state in
            state.tornTail = stillTorn
            if failure == nil {
                state.fileBytes += bytes.count
                for item in batch { item.apply(&state) }
            } else {
                for item in batch { item.undo(&state) }
            }
        }
        if let failure {
            for item in batch { item.continuation.resume(returning: .failure(failure)) }
        } else {
            compactIfWorthIt()
            for item in batch { item.continuation.resume(returning: .success(())) }
        }
    }

    /// Rewrites the file with the live entries and their attempts only, when dead records outweigh
    /// them, or empties it when the queue is empty. Runs on the I/O queue.
    private func compactIfWorthIt() {
        let plan = state.withLock { state -> (entries: [QueuedEntry], attempts: [UUID: Int], descriptor: Int32)? in
            let live = state.liveBytes + state.attemptBytes
            let dead = state.fileBytes - JournalCodec.header.count - live
            guard !state.closed, !state.drainScheduled, !state.tornTail else { return nil }
            if state.count == 0, state.fileBytes > JournalCodec.header.count { return ([], [:], state.descriptor) }
            guard dead > 1 << 20, dead > live else { return nil }
            let records = state.liveRecords
            return (records.entries, records.attempts, state.descriptor)
        }
        guard let plan else { return }
        do {
            let (descriptor, length) = try Self.rewrite(fileURL, entries: plan.entries, attempts: plan.attempts)
            state.withLock { state in
                state.descriptor = descriptor
                state.fileBytes = length
            }
            if plan.descriptor >= 0 { posixClose(plan.descriptor) }
        } catch {
            // The old file is still whole and in use: compaction is only an optimisation.
        }
    }

    // MARK: File operations

    /// Creates the directory owner-only, or refuses one another user could write into or replace
    /// (``PrivateFiles``): they could swap the journal for a link or a FIFO, or read what it holds.
    /// Reading by others is not refused: an app may keep its queue in a directory it shares for reading.
    private static func verifyDirectory(_ directory: URL) throws(SignatureQueueError) {
        let path = LogText.escaped(directory.path)
        do {
            _ = try PrivateFiles.verifyDirectory(directory, forbidding: 0o022, creating: true)
        } catch {
            switch error {
            case .notADirectory:
                throw .storageFailed("the queue directory \(path) is not a directory (a symbolic link or a file)")
            case .directoryNotOwned:
                throw .storageFailed("the queue directory \(path) is not owned by this process's user")
            case .directoryOpenToOthers(let mode):
                throw .storageFailed("the queue directory \(path) can be written by other users (mode \(String(mode, radix: 8))); give it owner-only permissions (0700)")
            case .unsafeParent(let parent, let reason):
                throw .storageFailed("the queue directory \(path) is not used: its parent \(LogText.escaped(parent)) \(reason), so another user could replace it")
            case .systemCall(let call, let code):
                throw .storageFailed("could not \(call.replacingOccurrences(of: "the directory", with: "the queue directory")) (errno \(code))")
            case .symbolicLink, .notARegularFile, .fileNotOwned, .fileOpenToOthers:
                throw .storageFailed("the queue directory \(path) is not a directory")
            }
        }
    }

    /// Opens `path` as ``PrivateFiles`` opens a file: no symbolic link followed, a FIFO refused
    /// without waiting on it, only a regular file this user owns and others cannot write.
    /// Returns -1 when the file does not exist and `flags` does not create it.
    private static func openRegularFile(_ path: String, flags: Int32, what: String) throws(SignatureQueueError) -> Int32 {
        do {
            return try PrivateFiles.openRegularFile(path, flags: flags, forbidding: 0o022)
        } catch {
            switch error {
            case .symbolicLink: throw .storageFailed("\(what) is a symbolic link; refused (nothing is read or written through it)")
            case .notARegularFile: throw .storageFailed("\(what) is not a regular file (a FIFO, device, socket or directory); refused")
            case .fileNotOwned: throw .storageFailed("\(what) is not owned by this process's user; refused")
            case .fileOpenToOthers(let mode): throw .storageFailed("\(what) can be written by other users (mode \(String(mode, radix: 8))); refused")
            case .systemCall(let call, let code): throw .storageFailed("could not \(call.replacingOccurrences(of: "the file", with: what)) (errno \(code))")
            case .notADirectory, .directoryNotOwned, .directoryOpenToOthers, .unsafeParent: throw .storageFailed("\(what) is refused")
            }
        }
    }

    /// The first `limit` bytes of the file open at `descriptor`, and whether that is the whole file.
    private static func readAll(_ descriptor: Int32, limit: Int) throws(SignatureQueueError) -> (bytes: [UInt8], whole: Bool) {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, min($0.count, limit + 1 - bytes.count)) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .storageFailed("could not read the queue file (errno \(errno))")
            }
            if count == 0 { return (bytes, true) }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > limit { return (Array(bytes[0..<limit]), false) }
        }
    }

    /// Writes `bytes` to a new owner-only file at `url`.
    private static func rewriteRaw(_ url: URL, bytes: [UInt8]) throws(SignatureQueueError) {
        let descriptor = open(url.path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .storageFailed("could not create \(url.lastPathComponent) (errno \(errno))") }
        defer { posixClose(descriptor) }
        if let failure = writeAll(descriptor, bytes) { throw failure }
    }

    /// Writes a new file holding `entries`, each followed by one `sending` record per attempt in
    /// `attempts`, flushes it, renames it over `url` and returns its open descriptor (positioned at
    /// the end, in append mode).
    private static func rewrite(_ url: URL, entries: [QueuedEntry], attempts: [UUID: Int] = [:]) throws(SignatureQueueError) -> (descriptor: Int32, length: Int) {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        let descriptor = open(temporary.path, O_CREAT | O_EXCL | O_WRONLY | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .storageFailed("could not create a queue file (errno \(errno))") }
        var bytes = JournalCodec.header
        for entry in entries {
            bytes.append(contentsOf: JournalCodec.encode(.entry(entry)))
            if let count = attempts[entry.id], count > 0 {
                let sending = JournalCodec.encode(.sending(entry.id))
                for _ in 0..<count { bytes.append(contentsOf: sending) }
            }
        }
        if let failure = writeAll(descriptor, bytes) {
            posixClose(descriptor)
            unlink(temporary.path)
            throw failure
        }
        guard rename(temporary.path, url.path) == 0 else {
            let code = errno
            posixClose(descriptor)
            unlink(temporary.path)
            throw .storageFailed("could not replace the queue file (errno \(code))")
        }
        syncDirectory(url.deletingLastPathComponent())
        return (descriptor, bytes.count)
    }

    /// Writes `bytes` whole and flushes them to the disk; `nil` when that worked.
    private static func writeAll(_ descriptor: Int32, _ bytes: [UInt8], writer: Writer = .system) -> SignatureQueueError? {
        let written = bytes.withUnsafeBytes { buffer -> Int in
            guard let base = buffer.baseAddress else { return 0 }
            var offset = 0
            while offset < buffer.count {
                let count = writer.write(descriptor, base + offset, buffer.count - offset)
                if count < 0, errno == EINTR { continue }
                if count <= 0 { return offset }
                offset += count
            }
            return offset
        }
        guard written == bytes.count else { return .storageFailed("could not write the queue file (errno \(errno))") }
        guard flushToDisk(descriptor) else { return .storageFailed("could not flush the queue file to disk (errno \(errno))") }
        return nil
    }

    /// Cuts the file back to `length`, its header and whole records, and flushes that; `nil` when
    /// that worked.
    private static func cutBack(_ descriptor: Int32, to length: Int) -> SignatureQueueError? {
        while ftruncate(descriptor, off_t(length)) != 0 {
            if errno == EINTR { continue }
            return .storageFailed("could not cut the queue file back to its last whole record after a failed write (errno \(errno)); nothing more is queued until it can be")
        }
        guard flushToDisk(descriptor) else {
            return .storageFailed("could not flush the queue file to disk after cutting it back to its last whole record (errno \(errno))")
        }
        return nil
    }

    private static func flushToDisk(_ descriptor: Int32) -> Bool {
        #if canImport(Darwin)
        // fsync on Apple platforms leaves the data in the drive's cache; F_FULLFSYNC does not.
        if fcntl(descriptor, F_FULLFSYNC) == 0 { return true }
        #endif
        return fsync(descriptor) == 0
    }

    private static func syncDirectory(_ directory: URL) {
        let descriptor = open(directory.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        posixClose(descriptor)
    }
}

/// `close(2)`, named apart from the journal's own `close()`.
private func posixClose(_ descriptor: Int32) {
    _ = close(descriptor)
}

/// `write(2)`.
private func posixWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}
