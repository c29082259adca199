import Foundation

/// Makes text from outside (names from configuration, endpoints, header names) safe to put in a
/// log line or an error message: control characters, line and paragraph separators, bidirectional
/// overrides and other non-ASCII are written as `\u{...}`, so a value cannot forge a log line or hide
/// its content, and long values are cut.
public enum LogText {
    /// `value` quoted and escaped, at most `limit` characters of it.
    public static func escaped(_ value: String, limit: Int = 128) -> String {
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
    public static func plain(_ value: String, limit: Int = 128) -> String {
        let quoted = escaped(value, limit: limit)
        return String(quoted.dropFirst().dropLast())
    }

    /// A type name as the user wrote it, for the vendors' lookup messages: every letter stays as it
    /// is, in any script, so the message names the real class; only what could forge or hide a log
    /// line (control characters, line and paragraph separators, bidirectional controls) is escaped.
    /// Cut at ``typeNameLimit`` Unicode scalars, the longest name a configuration accepts
    /// (`ConfigurationError.maximumProviderNameLength`), so an accepted name always appears whole.
    public static func typeName(_ value: String) -> String {
        readable(value, limit: typeNameLimit)
    }

    /// How much of a type name ``typeName(_:)`` shows, in Unicode scalars (256).
    public static let typeNameLimit = 256

    /// `value` as it reads, every letter in any script kept, with only what could forge or hide a
    /// log line escaped (control characters, line and paragraph separators, bidirectional
    /// controls), cut at `limit` characters: for sentences from outside (an app's own error message)
    /// that are meant to be read.
    public static func readable(_ value: String, limit: Int) -> String {
        var result = ""
        for (count, scalar) in value.unicodeScalars.enumerated() {
            if count == limit {
                result += "…"
                break
            }
            if couldForgeOrHide(scalar) {
                result += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// `value` in double quotes, as a JSON or Swift string literal writes it: `"` and `\` escaped,
    /// and what ``readable(_:limit:)`` escapes written as `\u{...}`, cut at `limit` characters. For
    /// tools that echo a value from a file (the doctor, the registration generator), so every tool
    /// escapes what it echoes the same way.
    public static func doubleQuoted(_ value: String, limit: Int) -> String {
        var result = "\""
        for (count, scalar) in value.unicodeScalars.enumerated() {
            if count == limit {
                result += "…"
                break
            }
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case _ where couldForgeOrHide(scalar): result += "\\u{\(String(scalar.value, radix: 16))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// `url`'s scheme, host, port and path, without its user information, query or fragment (a
    /// query is shown as `?…`): what a log or a description may show of a URL that may carry a
    /// password or a secret in its query.
    public static func url(_ url: URL) -> String {
        var components = URLComponents()
        components.scheme = url.scheme
        components.host = url.host
        components.port = url.port
        components.percentEncodedPath = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? ""
        let text = components.string ?? "(unprintable URL)"
        return url.query == nil ? text : text + "?…"
    }

    /// Control characters (C0, DEL, C1 such as U+0085), line and paragraph separators,
    /// bidirectional controls and the byte-order mark: what could forge a log line or hide its
    /// content.
    private static func couldForgeOrHide(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0xFEFF: true
        default: false
        }
    }
}
