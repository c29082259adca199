/// Turns a credential into text that is safe for a log or an error description.
///
/// A credential of fewer than 24 characters shows none of them: `(redacted, 13 chars)`. A longer
/// one shows a prefix of at most six characters and never more than a quarter of it, followed by
/// the length: `eyJhbG…(412 chars)`. (A JWT's first six characters are its encoded `{"alg"`.)
public enum Redaction {
    /// How many leading characters of a long credential are shown at most.
    static let visiblePrefixLength = 6
    /// Credentials shorter than this show no characters.
    static let minimumLengthForPrefix = 24

    /// A redacted rendering of `credential`.
    public static func redact(_ credential: String) -> String {
        let count = credential.count
        guard count >= minimumLengthForPrefix else { return "(redacted, \(count) chars)" }
        let shown = min(visiblePrefixLength, count / 4)
        return "\(LogText.plain(String(credential.prefix(shown))))…(\(count) chars)"
    }
}
