import Logging
import SDKAuthorization

/// A `DiagnosticsSink` that writes the framework's diagnostics to swift-log, with the request's
/// endpoint, scheme and event as metadata rather than inside one string, and with the metadata of
/// the logger in scope.
///
/// ```swift
/// let sink = SwiftLogDiagnosticsSink(logger: Logger(label: "my-sdk.auth"))
/// let client = try AuthorizedHTTPClient(configuration: configuration, diagnostics: sink)
/// ```
///
/// A rejection is then logged as
/// `warning: appInboxFetch was rejected with HTTP 401 (...) [sdkauth.endpoint: appInboxFetch, sdkauth.event: credentialRejected, sdkauth.scheme: bearer]`.
/// The metadata keys are ``endpointKey``, ``schemeKey`` and ``eventKey``; a key is left out when
/// the diagnostic has no such field. Levels map one to one (`debug`, `info`, `warning`, `error`);
/// a diagnostic below the logger's level costs one comparison.
///
/// ## The logger in scope
///
/// swift-log carries a logger in the task (`Logger.current`, set by `withLogger(_:_:)` and
/// `withLogger(mergingMetadata:_:)`). A diagnostic keeps the metadata of that logger, as read in
/// the task that records it (for a request, the task that sends it), such as a request ID the
/// caller set:
///
/// - Made with `SwiftLogDiagnosticsSink()`, the sink writes to `Logger.current` itself: its
///   handler, level and metadata.
/// - Made with a `logger:`, the sink writes to that logger, and adds the metadata of
///   `Logger.current` that the logger does not set itself.
///
/// The diagnostic's own fields win over metadata of the same key. A handler's `MetadataProvider`
/// (bootstrapped with `LoggingSystem.bootstrap(_:metadataProvider:)` or given to the handler) runs as
/// it does for any log call. Outside any `withLogger` scope, `Logger.current` is swift-log's
/// process-wide default logger, made on first use: bootstrap `LoggingSystem` before the first
/// request.
public struct SwiftLogDiagnosticsSink: DiagnosticsSink {
    /// The metadata key of the catalogue endpoint's name.
    public static let endpointKey = "sdkauth.endpoint"
    /// The metadata key of the scheme's name.
    public static let schemeKey = "sdkauth.scheme"
    /// The metadata key of the event's name (an `AuthorizationEvent.Kind` or a
    /// `RequestError.Code`).
    public static let eventKey = "sdkauth.event"

    /// The logger diagnostics go to; `nil` for the logger in scope (`Logger.current`) at each
    /// diagnostic.
    public let logger: Logger?

    /// Creates a sink that writes to `logger`, with the metadata of the logger in scope added.
    ///
    /// - Parameter logger: Where diagnostics go, with its own handler, level and metadata.
    public init(logger: Logger) {
        self.logger = logger
    }

    /// Creates a sink that writes to the logger in scope (`Logger.current`) when each diagnostic
    /// is recorded.
    public init() {
        self.logger = nil
    }

    /// Logs `diagnostic` at its level, with its fields and the scope's metadata as metadata.
    public func record(_ diagnostic: Diagnostic) {
        let level = Self.level(diagnostic.level)
        let logger = self.logger ?? Logger.current
        guard level >= logger.logLevel else { return }
        var metadata: Logger.Metadata = [:]
        if self.logger != nil {
            // The scope's metadata the logger does not set itself; the logger's handler adds its own.
            let own = logger.handler.metadata
            for (key, value) in Logger.current.handler.metadata where own[key] == nil { metadata[key] = value }
        }
        if let endpoint = diagnostic.endpoint { metadata[Self.endpointKey] = .string(endpoint.description) }
        if let scheme = diagnostic.scheme { metadata[Self.schemeKey] = .string(scheme.description) }
        if let event = diagnostic.event { metadata[Self.eventKey] = .string(event) }
        logger.log(level: level, Logger.Message(stringLiteral: diagnostic.message), metadata: metadata.isEmpty ? nil : metadata)
    }

    /// The swift-log level of a diagnostic level.
    static func level(_ level: Diagnostic.Level) -> Logger.Level {
        switch level {
        case .debug: .debug
        case .info: .info
        case .warning: .warning
        case .error: .error
        }
    }
}
