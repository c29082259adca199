import Foundation

/// Reads a `Retry-After` field (RFC 9110, section 10.2.3): delta-seconds, or an HTTP date in any of
/// its three formats (IMF-fixdate, RFC 850, asctime).
///
/// Bounded: a field longer than 256 bytes is not read, a number of more than 12 digits reads as
/// 10^12 seconds (the caller caps the wait), and nothing traps on hostile input.
enum RetryAfter {
    /// The longest field read, in bytes.
    static let maximumLength = 256
    /// What a number of more than 12 digits reads as.
    static let hugeDelay: TimeInterval = 1e12

    /// The seconds to wait from `now`, at least 0, or `nil` when `value` is neither delta-seconds
    /// nor an HTTP date.
    static func seconds(in value: String, now: Date) -> TimeInterval? {
        var bytes = Array(value.utf8.prefix(maximumLength + 1))
        guard bytes.count <= maximumLength else { return nil }
        // Optional whitespace around the field value.
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes.removeLast() }
        let start = bytes.firstIndex { $0 != 0x20 && $0 != 0x09 } ?? bytes.endIndex
        let text = bytes[start...]
        guard !text.isEmpty else { return nil }
        if text.allSatisfy(isDigit) {
            guard text.count <= 12 else { return hugeDelay }
            return TimeInterval(text.reduce(0) { $0 * 10 + Int($1 - 0x30) })
        }
        guard let date = httpDate(text) else { return nil }
        return max(0, date - now.timeIntervalSince1970)
    }

    // MARK: HTTP dates

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"].map { Array($0.utf8) }
    private static let shortDays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].map { Array($0.utf8) }
    private static let longDays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"].map { Array($0.utf8) }

    /// Seconds since 1970 of an HTTP date, or `nil`.
    ///
    /// - IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`
    /// - RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT` (a two-digit year below 70 is 20yy, otherwise 19yy)
    /// - asctime: `Sun Nov  6 08:49:37 1994`
    private static func httpDate(_ text: ArraySlice<UInt8>) -> TimeInterval? {
        let parts = text.split(separator: 0x20, omittingEmptySubsequences: true).map(Array.init)
        switch parts.count {
        case 6:
            // IMF-fixdate.
            guard parts[0].count == 4, parts[0].last == UInt8(ascii: ","), shortDays.contains(Array(parts[0].dropLast())),
                  parts[1].count == 2, let day = number(parts[1]),
                  let month = months.firstIndex(of: parts[2]),
                  parts[3].count == 4, let year = number(parts[3]),
                  let time = clock(parts[4]), parts[5] == Array("GMT".utf8)
            else { return nil }
            return timestamp(year: year, month: month + 1, day: day, time: time)
        case 4:
            // RFC 850.
            let date = parts[1].split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false).map(Array.init)
            guard parts[0].last == UInt8(ascii: ","), longDays.contains(Array(parts[0].dropLast())),
                  date.count == 3, date[0].count == 2, let day = number(date[0]),
                  let month = months.firstIndex(of: date[1]),
                  date[2].count == 2, let shortYear = number(date[2]),
                  let time = clock(parts[2]), parts[3] == Array("GMT".utf8)
            else { return nil }
            return timestamp(year: shortYear < 70 ? 2000 + shortYear : 1900 + shortYear, month: month + 1, day: day, time: time)
        case 5:
            // asctime: the day may be one digit after two spaces.
            guard shortDays.contains(parts[0]), let month = months.firstIndex(of: parts[1]),
                  (1...2).contains(parts[2].count), let day = number(parts[2]),
                  let time = clock(parts[3]),
                  parts[4].count == 4, let year = number(parts[4])
            else { return nil }
            return timestamp(year: year, month: month + 1, day: day, time: time)
        default:
            return nil
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }

    /// A short run of ASCII digits as a number.
    private static func number(_ bytes: [UInt8]) -> Int? {
        guard !bytes.isEmpty, bytes.count <= 4, bytes.allSatisfy(isDigit) else { return nil }
        return bytes.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    /// `hh:mm:ss` as seconds into the day.
    private static func clock(_ bytes: [UInt8]) -> Int? {
        let fields = bytes.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false).map(Array.init)
        guard fields.count == 3, fields.allSatisfy({ $0.count == 2 }),
              let hour = number(fields[0]), let minute = number(fields[1]), let second = number(fields[2]),
              hour < 24, minute < 60, second <= 60
        else { return nil }
        return hour * 3_600 + minute * 60 + second
    }

    /// Seconds since 1970 of a valid proleptic Gregorian date and a time of day, or `nil`.
    private static func timestamp(year: Int, month: Int, day: Int, time: Int) -> TimeInterval? {
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...12).contains(month), (1...lengths[month - 1]).contains(day) else { return nil }
        // Days from 1970-01-01 (Howard Hinnant's days_from_civil).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return TimeInterval(days * 86_400 + time)
    }
}
