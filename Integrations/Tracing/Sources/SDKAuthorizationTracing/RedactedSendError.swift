import Foundation
import SDKAuthorization

/// What a client span records when a send throws: the error's type and its text with the request's
/// secrets taken out, never the error itself.
///
/// A transport's error text often holds the request's whole URL (on Linux, `URLError`'s names
/// `NSErrorFailingURLStringKey` with `user:password@` and `?api_key=`), and a tracer exports what
/// a span records. So the text is redacted before it is recorded:
/// - every URL in it keeps its scheme, host, port and path: user information is dropped, and a
///   query or fragment becomes `?<redacted>` or `#<redacted>`;
/// - the request's own secrets are replaced by `<redacted>` wherever they appear: its URL's user,
///   password, query and fragment and each query value, and each header field's value (and the
///   credential after a scheme such as `Bearer`), when 4 characters or longer;
/// - it is cut at 1,024 characters.
struct RedactedSendError: Error, CustomStringConvertible, CustomDebugStringConvertible {
    /// The thrown error's type, module-qualified, as `error.type` names it.
    let type: String
    /// The thrown error's text, redacted.
    let message: String

    var description: String { "\(type): \(message)" }
    var debugDescription: String { description }

    static let placeholder = "<redacted>"
    static let maximumMessageLength = 1_024

    init(_ error: any Error, request: OutgoingRequest) {
        type = String(reflecting: Swift.type(of: error))
        message = Self.redact(String(describing: error), request: request)
    }

    /// `text` without the secrets of `request` and without the user information, query and
    /// fragment of any URL in it.
    static func redact(_ text: String, request: OutgoingRequest) -> String {
        // URLs first: the placeholder's angle brackets would end a URL early.
        var redacted = withoutURLSecrets(text)
        for secret in secrets(of: request) {
            redacted = redacted.replacingOccurrences(of: secret, with: placeholder)
        }
        guard redacted.count > maximumMessageLength else { return redacted }
        return String(redacted.prefix(maximumMessageLength)) + "…"
    }

    /// The request's values that may be secrets, longest first (so a value containing another is
    /// replaced whole), 4 characters or longer.
    static func secrets(of request: OutgoingRequest) -> [String] {
        var values: [String?] = []
        if let components = URLComponents(url: request.url, resolvingAgainstBaseURL: true) {
            values += [components.percentEncodedUser, components.user, components.percentEncodedPassword, components.password,
                       components.percentEncodedQuery, components.query, components.percentEncodedFragment, components.fragment]
            values += (components.percentEncodedQueryItems ?? []).map(\.value)
            values += (components.queryItems ?? []).map(\.value)
        }
        for value in request.headers.values {
            values.append(value)
            values += value.split(separator: " ").dropFirst().map(String.init)   // `Bearer <token>`: the token alone too
        }
        let unique = Set(values.compactMap { $0 }.filter { $0.count >= 4 })
        return unique.sorted { $0.count != $1.count ? $0.count > $1.count : $0 < $1 }
    }

    /// `text` with each URL in it (`scheme://...`, up to white space or a quote) cut to scheme,
    /// host, port and path.
    static func withoutURLSecrets(_ text: String) -> String {
        let characters = Array(text)
        var result = ""
        var index = 0
        while index < characters.count {
            guard let urlEnd = urlEnd(in: characters, authorityStart: index) else {
                result.append(characters[index])
                index += 1
                continue
            }
            // characters[index] starts "://"; the scheme before it is already in `result`.
            result += "://"
            var position = index + 3
            let authorityEnd = characters[position..<urlEnd].firstIndex { "/?#".contains($0) } ?? urlEnd
            if let at = characters[position..<authorityEnd].lastIndex(of: "@") { position = at + 1 }
            let pathEnd = characters[position..<urlEnd].firstIndex { "?#".contains($0) } ?? urlEnd
            result += String(characters[position..<pathEnd])
            if pathEnd < urlEnd { result += "\(characters[pathEnd])\(placeholder)" }
            index = urlEnd
        }
        return result
    }

    /// When `characters[start...]` begins with `://` after a scheme, where the URL ends: at white
    /// space, a quote or an angle bracket.
    private static func urlEnd(in characters: [Character], authorityStart start: Int) -> Int? {
        guard start > 0, start + 3 <= characters.count, characters[start] == ":", characters[start + 1] == "/", characters[start + 2] == "/",
              characters[start - 1].isLetter || characters[start - 1].isNumber else { return nil }
        var end = start + 3
        while end < characters.count, !characters[end].isWhitespace, !"\"'<>`".contains(characters[end]) { end += 1 }
        return end
    }
}
