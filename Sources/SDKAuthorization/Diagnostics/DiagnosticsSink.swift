import Foundation
internal import SDKAuthorizationPrimitives

extension Diagnostic {
    /// How serious a diagnostic is.
    public enum Level: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
        case debug
        case info
        case warning
        case error

        public static func < (lhs: Diagnostic.Level, rhs: Diagnostic.Level) -> Bool {
            lhs.rawValue < rhs.rawValue
        }

        public var description: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .warning: "warning"
            case .error: "error"
            }
        }
    }
}

/// One message the framework reports: a level and a text that never holds a whole credential,
/// and, where the message is about a request or an event, the endpoint, scheme and event name as
/// separate fields a structured logger can keep as metadata.
public struct Diagnostic: Sendable, Equatable, CustomStringConvertible {
    /// How serious it is.
    public var level: Diagnostic.Level
    /// The text. Credentials in it are redacted (as `Redaction` does, in the mode kit).
    public var message: String
    /// The catalogue endpoint of the request the message is about, when it has one.
    public var endpoint: Endpoint.ID?
    /// The scheme of the request the message is about, when one is concerned.
    public var scheme: AuthorizationScheme?
    /// A stable name for what happened, when the message reports one: an
    /// ``AuthorizationEvent/Kind`` (`credentialRejected`, `refreshWindowExceeded`, `waitEnded`, ...)
    /// or a ``RequestError/Code`` (`providerFailed`, `invalidCredential`, `deadlineExceeded`, ...).
    public var event: String?

    /// Creates a diagnostic.
    public init(level: Diagnostic.Level, message: String, endpoint: Endpoint.ID? = nil, scheme: AuthorizationScheme? = nil, event: String? = nil) {
        self.level = level
        self.message = message
        self.endpoint = endpoint
        self.scheme = scheme
        self.event = event
    }

    public var description: String { "[SDKAuthorization] \(level): \(message)" }
}

/// Where the framework's diagnostics go.
///
/// The framework never prints; it hands every message to a sink
/// (``StandardErrorDiagnosticsSink/inDebugBuilds`` by default). `SwiftLogDiagnosticsSink`
/// (`SDKAuthorizationLogging`) routes them into swift-log; for `os.Logger` or your SDK's own
/// logger, conform a small type of yours:
///
/// ```swift
/// struct SDKLogSink: DiagnosticsSink {
///     let log: @Sendable (String) -> Void   // your SDK's logger, or an os.Logger's
///     func record(_ diagnostic: Diagnostic) {
///         if diagnostic.level >= .warning { log("[authorization] \(diagnostic.message)") }
///     }
/// }
/// ```
///
/// # Implementation requirements
/// `record(_:)` may be called from any thread, concurrently; it must not block for long and must
/// not call back into the framework.
public protocol DiagnosticsSink: Sendable {
    /// Receives one diagnostic.
    func record(_ diagnostic: Diagnostic)
}

extension DiagnosticsSink {
    /// Records one diagnostic made of these parts; `message` is built only when called. What a mode
    /// writes here reaches the app's logs: escape text from outside with `LogText` (mode kit) and
    /// never pass a credential.
    public func log(_ level: Diagnostic.Level, _ message: @autoclosure () -> String,
             endpoint: Endpoint.ID? = nil, scheme: AuthorizationScheme? = nil, event: String? = nil) {
        record(Diagnostic(level: level, message: message(), endpoint: endpoint, scheme: scheme, event: event))
    }
}
