import SDKAuthorization
import SDKAuthorizationModeKit

/// One line of the doctor's report: a verdict on a file or a token, with how serious it is.
package struct Finding: Sendable, Equatable, CustomStringConvertible {
    /// How serious a finding is. Only ``error`` makes the run fail.
    package enum Severity: String, Sendable, Equatable {
        /// A fact worth showing: a file's summary, a token's header and claims.
        case note
        /// Something that may fail later, that the doctor cannot decide alone.
        case warning
        /// Something that fails: the framework refuses the file, or the token is unusable.
        case error
    }

    /// How serious it is.
    package var severity: Severity
    /// The file the finding is about, as given or relative to the package directory; `nil` for a token.
    package var file: String?
    /// The configuration key concerned, when one is.
    package var key: String?
    /// The text. For a configuration file refused by the framework, exactly the message the
    /// framework logs (`ConfigurationError.message`).
    package var message: String

    package init(_ severity: Severity, file: String? = nil, key: String? = nil, _ message: String) {
        self.severity = severity
        self.file = file
        self.key = key
        self.message = message
    }

    /// `file: error: message (key 'name')`, the form compilers use, so editors can link it; a
    /// note is `file: message`, or only the message. The file name and key come from outside (a
    /// key may be one the file invented), so what could forge or hide a line in them is escaped.
    package var description: String {
        var text = file.map { "\(LogText.readable($0, limit: 512)): " } ?? ""
        text += severity == .note ? message : "\(severity.rawValue): \(message)"
        if let key { text += " (key '\(LogText.readable(key, limit: 128))')" }
        return text
    }
}

/// What one run of the doctor found, and how the process should end.
package struct DoctorReport: Sendable, Equatable {
    /// Every finding, in order.
    package var findings: [Finding] = []
    /// Set for a usage mistake (status 64), which is not a finding about a file or token.
    package var usageError = false

    package init(findings: [Finding] = [], usageError: Bool = false) {
        self.findings = findings
        self.usageError = usageError
    }

    /// Whether any finding is an error.
    package var hasErrors: Bool { findings.contains { $0.severity == .error } }

    /// 0 when nothing is wrong (warnings allowed), 1 on any error, 64 for a usage mistake.
    package var exitStatus: Int32 { usageError ? 64 : hasErrors ? 1 : 0 }
}
