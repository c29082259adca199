import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit

/// Decodes a JWT with the framework's bounded parser and says what it holds and what is wrong. A
/// token pasted with its `Bearer ` scheme is read without it.
///
/// The header and claims are shown (the token is the user's own); the signature segment, and so
/// the token itself, never is. The signature is not verified: the doctor holds no keys.
///
/// Errors: the token cannot be decoded, its `alg` is `none` (unsigned), its `exp` has passed.
/// Warnings: no `exp` (the framework's cache never keeps such a token), no `alg`, an `nbf` still
/// ahead.
package enum TokenCheck {
    /// The findings for `token` at the time `now`.
    package static func check(_ token: String, now: Date) -> [Finding] {
        var trimmed = token.trimmingCharacters(in: .whitespacesAndNewlines)
        // A token copied with its header: `Bearer eyJ...`.
        if trimmed.lowercased().hasPrefix("bearer ") {
            trimmed = trimmed.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces)
        }
        let claims: JWTClaims
        do {
            claims = try JWTClaims(decoding: trimmed)
        } catch {
            return [Finding(.error, "JWT: \(error.message)")]
        }
        var findings = [Finding(.note, "JWT header:")]
        findings += lines(claims.header, now: now)
        findings.append(Finding(.note, "JWT claims:"))
        findings += lines(claims.payload, now: now)
        findings.append(Finding(.note, "JWT signature: not shown, not verified"))

        switch claims.header["alg"] {
        case .string(let alg)? where alg.lowercased() == "none":
            findings.append(Finding(.error, "JWT alg is 'none': the token is unsigned, and a server must refuse it"))
        case .string?:
            break
        default:
            findings.append(Finding(.warning, "JWT header names no alg"))
        }
        if let expiry = claims.expiresAt {
            if claims.expires(within: 0, of: now) {
                findings.append(Finding(.error, "JWT expired \(duration(now.timeIntervalSince(expiry))) ago (exp \(timestamp(expiry)))"))
            } else {
                findings.append(Finding(.note, "JWT expires in \(duration(expiry.timeIntervalSince(now))) (exp \(timestamp(expiry)))"))
            }
        } else {
            findings.append(Finding(.warning, "JWT has no exp claim: it never expires by its own account, and the framework's token cache never keeps it"))
        }
        if case .number(let seconds)? = claims.payload["nbf"], seconds.isFinite, Date(timeIntervalSince1970: seconds) > now {
            let notBefore = Date(timeIntervalSince1970: seconds)
            findings.append(Finding(.warning, "JWT is not valid for another \(duration(notBefore.timeIntervalSince(now))) (nbf \(timestamp(notBefore)))"))
        }
        return findings
    }

    /// One note a member, sorted by name; times get their date and distance from `now`.
    private static func lines(_ object: [String: JWTClaimValue], now: Date) -> [Finding] {
        object.keys.sorted().map { name in
            let value = object[name] ?? .null
            var text = "  \(LogText.readable(name, limit: 64)): \(render(value))"
            if ["exp", "iat", "nbf", "auth_time"].contains(name), case .number(let seconds) = value, seconds.isFinite {
                let date = Date(timeIntervalSince1970: seconds)
                let distance = date.timeIntervalSince(now)
                text += " (\(timestamp(date)), \(distance >= 0 ? "in \(duration(distance))" : "\(duration(-distance)) ago"))"
            }
            return Finding(.note, text)
        }
    }

    /// JSON-like text of a value; strings are quoted with only what could forge a line escaped.
    static func render(_ value: JWTClaimValue) -> String {
        switch value {
        case .string(let text):
            return LogText.doubleQuoted(text, limit: 256)
        case .number(let number):
            if number.isFinite, number == number.rounded(), abs(number) < 1e15 { return String(Int64(number)) }
            return String(number)
        case .bool(let flag): return String(flag)
        case .null: return "null"
        case .array(let items): return "[" + items.map(render).joined(separator: ", ") + "]"
        case .object(let members):
            return "{" + members.keys.sorted().map { "\"\(LogText.readable($0, limit: 64))\": \(render(members[$0] ?? .null))" }.joined(separator: ", ") + "}"
        }
    }

    /// `2026-01-01T00:00:00Z`.
    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }

    /// `42 s`, `5 min 3 s`, `2 h 5 min`, `3 d 4 h`: two units at most, rounded down.
    static func duration(_ seconds: TimeInterval) -> String {
        let total = Int(max(0, min(seconds, 1e15)))
        let (days, hours, minutes, rest) = (total / 86_400, total % 86_400 / 3_600, total % 3_600 / 60, total % 60)
        if days > 0 { return "\(days) d \(hours) h" }
        if hours > 0 { return "\(hours) h \(minutes) min" }
        if minutes > 0 { return "\(minutes) min \(rest) s" }
        return "\(rest) s"
    }
}
