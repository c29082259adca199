/// Makes text from outside (names from configuration, endpoints, header names) safe to put in a
/// log line or an error message: control characters, line and paragraph separators, bidirectional
/// overrides and other non-ASCII are written as `\u{...}`, so a value cannot forge a log line or hide
/// its content, and long values are cut.
enum LogText {
    /// `value` quoted and escaped, at most `limit` characters of it.
    static func escaped(_ value: String, limit: Int = 128) -> String {
        var result = "'"
        var count = 0
        for scalar in value.unicodeScalars {
            if count == limit {
                result += "…"
                break
            }
            count += 1
            switch scalar.value {
            case 0x20...0x7E where scalar != "'" && scalar != "\\":
                result.unicodeScalars.append(scalar)
            default:
                result += "\\u{\(String(scalar.value, radix: 16))}"
            }
        }
        return result + "'"
    }

    /// `value` escaped as by ``escaped(_:limit:)`` but without quotes, for names already known to be
    /// mostly plain (endpoint and type names).
    static func plain(_ value: String, limit: Int = 128) -> String {
        let quoted = escaped(value, limit: limit)
        return String(quoted.dropFirst().dropLast())
    }
}
