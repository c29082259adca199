import Logging
import SDKAuthorization

/// A `DiagnosticsSink` that writes the framework's diagnostics to a swift-log
/// `Logger`, with the request's endpoint, scheme and event as metadata rather than inside one string.
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
public struct SwiftLogDiagnosticsSink: DiagnosticsSink {
    /// The metadata key of the catalogue endpoint's name.
    public static let endpointKey = "sdkauth.endpoint"
    /// The metadata key of the scheme's name.
    public static let schemeKey = "sdkauth.scheme"
    /// The metadata key of the event's name (an `AuthorizationEvent.Kind` or a
    /// `RequestError.Code`).
    public static let eventKey = "sdkauth.event"

    /// The logger diagnostics go to.
    public let logger: Logger

    /// Creates a sink that writes to `logger`.
    public init(logger: Logger) {
        self.logger = logger
    }

    /// Logs `diagnostic` at its level, with its fields as metadata.
    public func record(_ diagnostic: Diagnostic) {
        let level = Self.level(diagnostic.level)
        guard level >= logger.logLevel else { return }
        var metadata: Logger.Metadata = [:]
        if let endpoint = diagnostic.endpoint { metadata[Self.endpointKey] = .string(endpoint.description) }
        if let scheme = diagnostic.scheme { metadata[Self.schemeKey] = .string(scheme.description) }
        if let event = diagnostic.event { metadata[Self.eventKey] = .string(event) }
        logger.log(level: level, Logger.Message(stringLiteral: diagnostic.message), metadata: metadata.isEmpty ? nil : metadata)
    }

    /// The swift-log level of a diagnostic level.
    static func level(_ level: DiagnosticLevel) -> Logger.Level {
        switch level {
        case .debug: .debug
        case .info: .info
        case .warning: .warning
        case .error: .error
        }
    }
}
