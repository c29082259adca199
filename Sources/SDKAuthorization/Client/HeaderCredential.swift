/// The rules a credential must pass before it goes into a header.
enum HeaderCredential {
    enum Verdict: Equatable { case valid, empty, controlCharacters }

    /// Empty or white-space-only credentials, and any control character (CR, LF, NUL, DEL, Unicode Cc),
    /// are refused.
    static func check(_ credential: String) -> Verdict {
        if credential.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return .controlCharacters
        }
        if credential.allSatisfy(\.isWhitespace) { return .empty }
        return .valid
    }

    /// The characters of an HTTP token (RFC 9110), which a header name must consist of.
    static let tokenCharacters = Set("!#$%&'*+-.^_`|~ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

    /// Whether a caller-supplied header may be sent: a token name, and a value without control
    /// characters other than horizontal tab.
    static func isValidHeader(name: String, value: String) -> Bool {
        !name.isEmpty && name.allSatisfy { tokenCharacters.contains($0) }
            && !value.unicodeScalars.contains { $0.properties.generalCategory == .control && $0 != "\t" }
    }
}
