import Foundation

/// The hosts the framework names and matches, checked on the UTF-8 bytes: a host name (labels of
/// ASCII letters, digits and `-`, not starting or ending with `-`, at most 63 bytes each and 253 in
/// all), a dotted-quad IPv4 literal, or an IPv6 literal. A trailing dot is allowed and ignored;
/// case is ignored.
///
/// A host that holds anything else (`%`, `@`, `/`, NUL, white space, non-ASCII, an IPv6 zone) is
/// no host: it never matches a rule, an authorized domain or a catalogue origin.
public enum HostName {
    /// `host` lower-cased, without its trailing dot or IPv6 brackets, or `nil` when it is not a
    /// host. An IPv6 literal may come bracketed (`[::1]`) or bare (`::1`, as `URL.host` gives it).
    public static func normalized(_ host: String) -> String? {
        let utf8 = host.utf8
        if utf8.first == UInt8(ascii: "["), utf8.last == UInt8(ascii: "]") {
            let bytes = Array(utf8.dropFirst().dropLast())
            guard isIPv6(bytes) else { return nil }
            return lowercased(bytes)
        }
        if utf8.contains(UInt8(ascii: ":")) {
            let bytes = Array(utf8)
            guard isIPv6(bytes) else { return nil }
            return lowercased(bytes)
        }
        let name = utf8.count > 1 && utf8.last == UInt8(ascii: ".") ? utf8.dropLast() : utf8[...]
        guard isIPv4(name) || isName(name) else { return nil }
        // The usual host is lower case already, and comes back as it is.
        if name.count == utf8.count, !utf8.contains(where: { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) { return host }
        return lowercased(name)
    }

    private static func lowercased(_ bytes: some Collection<UInt8>) -> String {
        String(decoding: bytes.map(HeaderFieldRules.asciiLowercased), as: UTF8.self)
    }

    /// Whether `host` is a loopback host: `localhost`, an IPv4 address in `127.0.0.0/8` or the IPv6
    /// address `::1` (bracketed or not, in any of its spellings). Case and a trailing dot are
    /// ignored; anything that is not a host (see ``HostName``) is not loopback. The decision is
    /// on the text alone, without name resolution: a name that resolves to `127.0.0.1` is not
    /// loopback here. The one place the framework makes this decision (http is allowed only on a
    /// loopback host).
    public static func isLoopback(_ host: String) -> Bool {
        guard let host = normalized(host) else { return false }
        return isNormalizedLoopback(host)
    }

    /// ``isLoopback(_:)`` for a host already normalized.
    public static func isNormalizedLoopback(_ host: String) -> Bool {
        let bytes = Array(host.utf8)
        if host == "localhost" { return true }
        if bytes.contains(UInt8(ascii: ":")) {
            // A valid IPv6 literal (normalized checked it) is ::1 when every group but the last is
            // zero and the last, which must end the text (`1::` is another address), is 1. An
            // IPv4-mapped tail (::ffff:127.0.0.1) is not taken as loopback.
            guard bytes.last != UInt8(ascii: ":"), !bytes.contains(UInt8(ascii: ".")) else { return false }
            let groups = bytes.split(separator: UInt8(ascii: ":"))
            guard let last = groups.last, last.drop(while: { $0 == UInt8(ascii: "0") }).elementsEqual([UInt8(ascii: "1")]) else { return false }
            return groups.dropLast().allSatisfy { $0.allSatisfy { $0 == UInt8(ascii: "0") } }
        }
        return isIPv4(bytes) && bytes.starts(with: Array("127.".utf8))
    }

    /// Whether `host`, already normalized, is an IP address literal rather than a name.
    public static func isAddress(_ host: String) -> Bool {
        host.utf8.contains(UInt8(ascii: ":")) || isIPv4(Array(host.utf8))
    }

    /// The normalized host of `url`, or `nil` when it has none or it is not a host. The host as the
    /// URL spells it must hold no `%`: `api%2Eexample.com` is not `api.example.com`.
    public static func host(of url: URL) -> String? {
        if #available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *) {
            // The host as the URL spells it, escapes kept: one with a `%` is no host.
            guard let host = url.host(percentEncoded: true), !host.isEmpty, !host.utf8.contains(UInt8(ascii: "%")) else { return nil }
            return normalized(host)
        }
        guard let host = url.host, !host.isEmpty, rawHostIsPlain(url.absoluteString) else { return nil }
        return normalized(host)
    }

    /// Whether the authority of `urlString` names its host without a `%` (the user information
    /// before an `@` may hold escapes; the host may not).
    private static func rawHostIsPlain(_ urlString: String) -> Bool {
        let bytes = urlString.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return true }
        var index = bytes.index(after: colon)
        for _ in 0..<2 {
            guard index != bytes.endIndex, bytes[index] == UInt8(ascii: "/") else { return true }
            index = bytes.index(after: index)
        }
        var sawPercent = false
        while index != bytes.endIndex {
            switch bytes[index] {
            case UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"): return !sawPercent
            case UInt8(ascii: "@"): sawPercent = false
            case UInt8(ascii: "%"): sawPercent = true
            default: break
            }
            index = bytes.index(after: index)
        }
        return !sawPercent
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }

    /// Labels of letters, digits and `-`, each of 1 to 63 bytes and neither starting nor ending
    /// with `-`; the last label not all digits (that would be an address). One pass over the bytes.
    private static func isName(_ bytes: some Collection<UInt8>) -> Bool {
        guard (1...253).contains(bytes.count) else { return false }
        let dot = UInt8(ascii: "."), hyphen = UInt8(ascii: "-")
        var labelLength = 0, labelIsAllDigits = true, previous = dot
        for byte in bytes {
            if byte == dot {
                guard labelLength > 0, previous != hyphen else { return false }
                labelLength = 0
                labelIsAllDigits = true
            } else {
                let digit = isDigit(byte)
                guard digit || byte == hyphen || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(HeaderFieldRules.asciiLowercased(byte)) else {
                    return false
                }
                guard byte != hyphen || labelLength > 0 else { return false }
                labelLength += 1
                guard labelLength <= 63 else { return false }
                if !digit { labelIsAllDigits = false }
            }
            previous = byte
        }
        return labelLength > 0 && previous != hyphen && !labelIsAllDigits
    }

    /// Four decimal parts from 0 to 255, without leading zeros. One pass over the bytes.
    private static func isIPv4(_ bytes: some Collection<UInt8>) -> Bool {
        var parts = 1, value = 0, digits = 0, startsWithZero = false
        for byte in bytes {
            if byte == UInt8(ascii: ".") {
                guard digits > 0, parts < 4 else { return false }
                parts += 1
                value = 0
                digits = 0
            } else {
                guard isDigit(byte), !(digits > 0 && startsWithZero), digits < 3 else { return false }
                if digits == 0 { startsWithZero = byte == UInt8(ascii: "0") }
                digits += 1
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                guard value <= 255 else { return false }
            }
        }
        return parts == 4 && digits > 0
    }

    /// Eight groups of one to four hex digits, one `::` standing for one or more zero groups, the
    /// last two groups optionally a dotted-quad IPv4 address. No zone (`%`).
    private static func isIPv6(_ bytes: [UInt8]) -> Bool {
        guard (2...45).contains(bytes.count) else { return false }
        let colon = UInt8(ascii: ":")
        var halves: [[UInt8]] = []
        var index = 0, start = 0
        while index < bytes.count {
            if index + 1 < bytes.count, bytes[index] == colon, bytes[index + 1] == colon {
                halves.append(Array(bytes[start..<index]))
                index += 2
                start = index
                guard halves.count == 1 else { return false }
            } else {
                index += 1
            }
        }
        halves.append(Array(bytes[start...]))
        var groups = 0
        for (position, half) in halves.enumerated() where !half.isEmpty {
            let parts = half.split(separator: colon, omittingEmptySubsequences: false)
            for (number, part) in parts.enumerated() {
                if part.contains(UInt8(ascii: ".")) {
                    // An IPv4 tail, only as the very last part.
                    guard position == halves.count - 1, number == parts.count - 1, isIPv4(part) else { return false }
                    groups += 2
                } else {
                    guard (1...4).contains(part.count), part.allSatisfy(isHexDigit) else { return false }
                    groups += 1
                }
            }
        }
        return halves.count == 2 ? groups <= 7 : groups == 8
    }
}
