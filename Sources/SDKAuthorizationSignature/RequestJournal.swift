import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SDKAuthorization

/// One queued request as the journal keeps it.
struct QueuedEntry: Sendable, Equatable {
    let id: UUID
    let enqueuedAt: Date
    let userId: String?
    let request: OutgoingRequest
    /// How old it was at a moment the next launch can find again; `nil` in files written before
    /// marks were kept (their age is read from the wall clock, from ``enqueuedAt``).
    var mark: AgeMark? = nil
}

/// How old a queued request was at one moment: `counted` seconds when the wall clock said `wall`
/// and the monotonic clock `uptime`, in the system's boot session `boot`.
///
/// The monotonic clock goes on across launches within one boot of the system, so a later launch
/// in the same boot session counts the time between on it, and a wall-clock change never ages a
/// request. A new boot restarts the monotonic clock: the time since the mark can then only be read
/// from the wall clock (never less than 0), and the first launch of that boot marks every request
/// again with the age it counted, so what was counted is kept.
struct AgeMark: Sendable, Equatable {
    var counted: TimeInterval
    var wall: Date
    var uptime: TimeInterval
    /// The system's boot session identifier (at most ``JournalCodec/maximumBootSessionLength``
    /// bytes); empty when the platform gives none, and then the wall clock is always used.
    var boot: [UInt8]

    /// The largest age a mark keeps (100 years): past any ``SignatureRequestQueue/Options/maximumAge``,
    /// and finite, so a mark that says more (a tampered file) is written as this, never as infinity.
    static let maximumCounted: TimeInterval = 100 * 365 * 86_400

    /// The earliest wall clock taken as a time, 2025-01-01 00:00 UTC, well before the framework
    /// existed: a device that boots with its clock at 1970 marks requests with a wall time that says
    /// nothing, and a time from or to it is unknown, never an age.
    static let earliestWallClock = Date(timeIntervalSince1970: 1_735_689_600)

    /// The request's age when the wall clock says `wall`, the monotonic clock `uptime`, in boot session `boot`.
    func age(wall now: Date, uptime nowUptime: TimeInterval, boot current: [UInt8]) -> TimeInterval {
        if !boot.isEmpty, boot == current, nowUptime >= uptime { return Self.clamped(counted + (nowUptime - uptime)) }
        return Self.clamped(counted + Self.wallInterval(from: wall, to: now))
    }

    /// The time from `start` to `end` on the wall clock: never less than 0, and 0 (unknown) when
    /// either is before ``earliestWallClock``.
    static func wallInterval(from start: Date, to end: Date) -> TimeInterval {
        guard start >= earliestWallClock, end >= earliestWallClock else { return 0 }
        return clamped(end.timeIntervalSince(start))
    }

    /// `age` within `0...maximumCounted`; a value that is not a number counts as the most.
    static func clamped(_ age: TimeInterval) -> TimeInterval {
        guard !age.isNaN else { return maximumCounted }
        return min(max(age, 0), maximumCounted)
    }
}

/// The journal's records: an entry was queued, its sending began, it is finished (sent or given up).
enum JournalRecord: Sendable, Equatable {
    case entry(QueuedEntry)
    case sending(UUID)
    case done(UUID)
}

/// The on-disk form of the request queue: an append-only log of checksummed records.
///
/// File: a 16-byte header (`SDKAUTHQ`, version 1, seven zero bytes), then records, each
/// `length (UInt32, big-endian) | CRC-32 of the body (UInt32) | body`, the body being a type byte
/// and its payload. An entry's payload may end with its age mark (``AgeMark``: a 1, the counted age,
/// the wall time and the monotonic time as 64-bit floats, the boot session's length and bytes);
/// files written before marks were kept have none and still read. A whole record that cannot be
/// read is skipped, by its own length, and the records after it are recovered (``decode(_:)``);
/// reading stops at a record cut short, and the caller reports what could not be read.
enum JournalCodec {
    static let header: [UInt8] = Array("SDKAUTHQ".utf8) + [1, 0, 0, 0, 0, 0, 0, 0]
    /// The longest record body: an entry with a 1 MiB body and its URL and header fields.
    static let maximumRecordLength = (1 << 20) + 65_536
    static let maximumBodyLength = 1 << 20
    static let maximumURLLength = 8_192
    static let maximumHeaderCount = 64
    /// The longest boot session identifier an age mark keeps (a UUID's text is 36 bytes).
    static let maximumBootSessionLength = 64

    enum RecordType: UInt8 { case entry = 1, sending = 2, done = 3 }

    /// The framed size of a `sending` record and of a `done` record: length, checksum, type, ID.
    static let sendingRecordLength = 8 + 1 + 16
    static let doneRecordLength = 8 + 1 + 16

    // MARK: Encoding

    static func encode(_ record: JournalRecord) -> [UInt8] {
        var body: [UInt8] = []
        switch record {
        case .entry(let entry):
            body.append(RecordType.entry.rawValue)
            append(entry.id, to: &body)
            append64(entry.enqueuedAt.timeIntervalSince1970.bitPattern, to: &body)
            if let user = entry.userId {
                body.append(1)
                appendString(user, lengthBytes: 2, to: &body)
            } else {
                body.append(0)
            }
            appendString(entry.request.method, lengthBytes: 1, to: &body)
            appendString(entry.request.url.absoluteString, lengthBytes: 2, to: &body)
            let headers = entry.request.headers.sorted { $0.key < $1.key }
            body.append(UInt8(headers.count))
            for (name, value) in headers {
                appendString(name, lengthBytes: 1, to: &body)
                appendString(value, lengthBytes: 2, to: &body)
            }
            if let data = entry.request.body {
                body.append(1)
                append32(UInt32(data.count), to: &body)
                body.append(contentsOf: data)
            } else {
                body.append(0)
            }
            // The age mark is an optional tail, so files written before it was kept still read.
            // Only finite values, within what the reader takes: a mark it would refuse is never written.
            if let mark = entry.mark {
                let wall = mark.wall.timeIntervalSince1970
                body.append(1)
                append64(AgeMark.clamped(mark.counted).bitPattern, to: &body)
                append64((wall.isFinite ? wall : 0).bitPattern, to: &body)
                append64((mark.uptime.isFinite ? mark.uptime : 0).bitPattern, to: &body)
                let boot = mark.boot.prefix(maximumBootSessionLength)
                body.append(UInt8(boot.count))
                body.append(contentsOf: boot)
            }
        case .sending(let id):
            body.append(RecordType.sending.rawValue)
            append(id, to: &body)
        case .done(let id):
            body.append(RecordType.done.rawValue)
            append(id, to: &body)
        }
        var framed: [UInt8] = []
        framed.reserveCapacity(body.count + 8)
        append32(UInt32(body.count), to: &framed)
        append32(CRC32.checksum(body), to: &framed)
        framed.append(contentsOf: body)
        return framed
    }

    /// The record of `entry`, or `nil` when it is longer than the reader takes (``maximumRecordLength``).
    static func encodeReadable(_ entry: QueuedEntry) -> [UInt8]? {
        let bytes = encode(.entry(entry))
        return bytes.count - 8 <= maximumRecordLength ? bytes : nil
    }

    /// Why an entry cannot be kept, or `nil` when it can (sizes the encoding can carry).
    static func problem(with entry: QueuedEntry) -> String? {
        if let user = entry.userId, user.utf8.count > Int(UInt16.max) { return "the user ID is too long" }
        if entry.request.method.utf8.count > 32 || entry.request.method.isEmpty { return "the method must be 1 to 32 bytes" }
        if entry.request.url.absoluteString.utf8.count > maximumURLLength { return "the URL is longer than \(maximumURLLength) bytes" }
        if entry.request.headers.count > maximumHeaderCount { return "more than \(maximumHeaderCount) header fields" }
        for (name, value) in entry.request.headers where name.utf8.count > 255 || value.utf8.count > 8_192 {
            return "a header field name over 255 bytes or value over 8192 bytes"
        }
        if let body = entry.request.body, body.count > maximumBodyLength { return "the body is larger than \(maximumBodyLength) bytes" }
        return nil
    }

    private static func append(_ id: UUID, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: id.uuid) { bytes.append(contentsOf: $0) }
    }

    private static func append32(_ value: UInt32, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: [UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)])
    }

    private static func append64(_ value: UInt64, to bytes: inout [UInt8]) {
        append32(UInt32(truncatingIfNeeded: value >> 32), to: &bytes)
        append32(UInt32(truncatingIfNeeded: value), to: &bytes)
    }

    private static func appendString(_ string: String, lengthBytes: Int, to bytes: inout [UInt8]) {
        let utf8 = Array(string.utf8)
        if lengthBytes == 1 {
            bytes.append(UInt8(truncatingIfNeeded: utf8.count))
        } else {
            bytes.append(UInt8(truncatingIfNeeded: utf8.count >> 8))
            bytes.append(UInt8(truncatingIfNeeded: utf8.count))
        }
        bytes.append(contentsOf: utf8)
    }

    // MARK: Decoding

    /// A record the reader skipped: its place in the file and why it could not be read (never its content).
    struct SkippedRecord: Equatable {
        var offset: Int
        var length: Int
        var reason: String
    }

    /// What reading a journal file found.
    struct Decoded {
        /// The whole records, in order.
        var records: [JournalRecord]
        /// The size of each record in the file, framing included.
        var sizes: [Int]
        /// Where reading stopped: the header, the whole records and the skipped ones cover the bytes before it.
        var validLength: Int
        /// False when the file does not start with the header (nothing is read then).
        var headerValid: Bool
        /// The bytes after ``validLength`` are only the start of a record (a write cut short), not damage.
        var tornTail: Bool
        /// Records before ``validLength`` that could not be read and were stepped over.
        var skipped: [SkippedRecord] = []

        /// The bytes that could not be read: the skipped records and everything after ``validLength``.
        func unreadableBytes(of fileLength: Int) -> Int {
            skipped.reduce(fileLength - validLength) { $0 + $1.length }
        }
    }

    /// The records of a journal file.
    ///
    /// A record that is whole but cannot be read (its checksum fails, it is longer than
    /// ``maximumRecordLength``, or its body does not decode) is skipped by its own length when that
    /// length leads on: to the end of the file, or through whole frames to a record that reads.
    /// A checksum that matches by chance there is one in 2^32. Reading stops, and the rest is
    /// reported, at a record cut short (a write that did not finish: only ever the last) or at a
    /// length that leads nowhere: the reader never searches byte by byte for the next record, since
    /// a request's body may hold bytes that look like one.
    static func decode(_ bytes: [UInt8]) -> Decoded {
        guard bytes.count >= header.count, Array(bytes[0..<header.count]) == header else {
            return Decoded(records: [], sizes: [], validLength: 0, headerValid: bytes.isEmpty, tornTail: false)
        }
        var records: [JournalRecord] = []
        var sizes: [Int] = []
        var skipped: [SkippedRecord] = []
        var offset = header.count
        var torn = false
        // Where the last check that skipped frames lead on found a record that reads (or the end):
        // the bad frames before it need no second check, so a run of them costs one walk.
        var leadsOnUntil = offset
        while offset < bytes.count {
            guard let (length, end) = frame(bytes, at: offset) else {
                torn = true
                break
            }
            guard length >= 1 else { break }
            guard end <= bytes.count else {
                // A record longer than any the queue writes is damage, not a write cut short.
                torn = length <= maximumRecordLength
                break
            }
            if length <= maximumRecordLength, let record = record(bytes, at: offset, end: end) {
                records.append(record)
                sizes.append(end - offset)
                offset = end
                continue
            }
            if end > leadsOnUntil {
                guard let found = leadsOn(bytes, from: end) else { break }
                leadsOnUntil = found
            }
            let reason = if length > maximumRecordLength {
                "is longer than the \(maximumRecordLength) bytes a record may have"
            } else if CRC32.checksum(bytes[(offset + 8)..<end]) != checksum(bytes, at: offset) {
                "fails its checksum"
            } else {
                "does not decode"
            }
            skipped.append(SkippedRecord(offset: offset, length: end - offset, reason: reason))
            offset = end
        }
        return Decoded(records: records, sizes: sizes, validLength: offset, headerValid: true, tornTail: torn, skipped: skipped)
    }

    /// The length a record's frame at `offset` states and where the record would end; `nil` when
    /// the file ends inside the frame's 8 bytes.
    private static func frame(_ bytes: [UInt8], at offset: Int) -> (length: Int, end: Int)? {
        var reader = Reader(bytes: bytes, offset: offset)
        guard let length = reader.uint32(), reader.uint32() != nil else { return nil }
        return (Int(length), reader.offset + Int(length))
    }

    private static func checksum(_ bytes: [UInt8], at offset: Int) -> UInt32? {
        var reader = Reader(bytes: bytes, offset: offset + 4)
        return reader.uint32()
    }

    /// The record framed at `offset` (ending at `end`, within the file), when its checksum matches and it decodes.
    private static func record(_ bytes: [UInt8], at offset: Int, end: Int) -> JournalRecord? {
        guard CRC32.checksum(bytes[(offset + 8)..<end]) == checksum(bytes, at: offset) else { return nil }
        return decodeBody(bytes, (offset + 8)..<end)
    }

    /// Where the frames from `offset`, each whole, lead to the end of the file or to a record that
    /// reads; `nil` when they do not.
    private static func leadsOn(_ bytes: [UInt8], from offset: Int) -> Int? {
        var position = offset
        while position < bytes.count {
            guard let (length, end) = frame(bytes, at: position), length >= 1, end <= bytes.count else { return nil }
            if length <= maximumRecordLength, record(bytes, at: position, end: end) != nil { return position }
            position = end
        }
        return position
    }

    private static func decodeBody(_ bytes: [UInt8], _ range: Range<Int>) -> JournalRecord? {
        var reader = Reader(bytes: bytes, offset: range.lowerBound, end: range.upperBound)
        guard let type = reader.uint8().flatMap(RecordType.init(rawValue:)), let id = reader.uuid() else { return nil }
        switch type {
        case .sending: return reader.atEnd ? .sending(id) : nil
        case .done: return reader.atEnd ? .done(id) : nil
        case .entry:
            guard let bits = reader.uint64(), let hasUser = reader.uint8(), hasUser <= 1 else { return nil }
            let date = Date(timeIntervalSince1970: Double(bitPattern: bits))
            var user: String?
            if hasUser == 1 {
                guard let value = reader.string(lengthBytes: 2) else { return nil }
                user = value
            }
            guard let method = reader.string(lengthBytes: 1), !method.isEmpty,
                  let urlText = reader.string(lengthBytes: 2), let url = URL(string: urlText),
                  let headerCount = reader.uint8(), Int(headerCount) <= maximumHeaderCount
            else { return nil }
            var headers: [String: String] = [:]
            for _ in 0..<headerCount {
                guard let name = reader.string(lengthBytes: 1), let value = reader.string(lengthBytes: 2), headers[name] == nil else { return nil }
                headers[name] = value
            }
            guard let hasBody = reader.uint8(), hasBody <= 1 else { return nil }
            var body: Data?
            if hasBody == 1 {
                guard let count = reader.uint32(), Int(count) <= maximumBodyLength, let data = reader.bytes(Int(count)) else { return nil }
                body = Data(data)
            }
            var mark: AgeMark?
            if !reader.atEnd {
                guard reader.uint8() == 1, let counted = reader.uint64().map(Double.init(bitPattern:)),
                      let wall = reader.uint64().map(Double.init(bitPattern:)), let uptime = reader.uint64().map(Double.init(bitPattern:)),
                      let bootLength = reader.uint8(), Int(bootLength) <= maximumBootSessionLength, let boot = reader.bytes(Int(bootLength)),
                      counted.isFinite, counted >= 0, wall.isFinite, uptime.isFinite
                else { return nil }
                mark = AgeMark(counted: counted, wall: Date(timeIntervalSince1970: wall), uptime: uptime, boot: Array(boot))
            }
            guard reader.atEnd, date.timeIntervalSince1970.isFinite else { return nil }
            return .entry(QueuedEntry(id: id, enqueuedAt: date, userId: user, request: OutgoingRequest(method: method, url: url, headers: headers, body: body), mark: mark))
        }
    }

    /// Reads big-endian numbers and length-prefixed strings, never past `end`.
    private struct Reader {
        let bytes: [UInt8]
        var offset: Int
        var end: Int

        init(bytes: [UInt8], offset: Int, end: Int? = nil) {
            self.bytes = bytes
            self.offset = offset
            self.end = end ?? bytes.count
        }

        var atEnd: Bool { offset == end }

        mutating func bytes(_ count: Int) -> ArraySlice<UInt8>? {
            guard count >= 0, count <= end - offset else { return nil }
            defer { offset += count }
            return bytes[offset..<offset + count]
        }

        mutating func uint8() -> UInt8? { bytes(1)?.first }

        mutating func uint32() -> UInt32? {
            guard let slice = bytes(4) else { return nil }
            return slice.reduce(0) { $0 << 8 | UInt32($1) }
        }

        mutating func uint64() -> UInt64? {
            guard let slice = bytes(8) else { return nil }
            return slice.reduce(0) { $0 << 8 | UInt64($1) }
        }

        mutating func uuid() -> UUID? {
            guard let s = bytes(16).map(Array.init) else { return nil }
            return UUID(uuid: (s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15]))
        }

        mutating func string(lengthBytes: Int) -> String? {
            let length: Int
            if lengthBytes == 1 {
                guard let value = uint8() else { return nil }
                length = Int(value)
            } else {
                guard let high = uint8(), let low = uint8() else { return nil }
                length = Int(high) << 8 | Int(low)
            }
            guard let slice = bytes(length) else { return nil }
            return String(validating: slice, as: UTF8.self)
        }
    }
}

/// CRC-32 (IEEE 802.3, the polynomial of zlib and PNG).
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    static func checksum(_ bytes: some Collection<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
