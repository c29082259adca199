/// Turns a credential into text that is safe for a log or an error description.
///
/// At most the first six characters are shown, followed by the length, e.g. `eyJhbG…(412 chars)`.
/// A credential of twelve characters or fewer shows no characters at all.
public enum Redaction {
    /// How many leading characters of a long credential are shown.
    static let visiblePrefixLength = 6

    /// A redacted rendering of `credential`.
    public static func redact(_ credential: String) -> String {
        let count = credential.count
        guard count > 2 * visiblePrefixLength else { return "(redacted, \(count) chars)" }
        return "\(credential.prefix(visiblePrefixLength))…(\(count) chars)"
    }
}
