import Logging
import SDKAuthorization

/// Routes the framework's diagnostics into swift-log, the way an app plugs in its own logger
/// without SDKAuthorization depending on swift-log. The same five lines work for `os.Logger`.
///
/// ```swift
/// let client = try AuthorizedHTTPClient(configuration: configuration,
///                                       diagnostics: SwiftLogDiagnosticsSink(logger: Logger(label: "my-sdk.auth")))
/// ```
public struct SwiftLogDiagnosticsSink: DiagnosticsSink {
    public let logger: Logger

    public init(logger: Logger) {
        self.logger = logger
    }

    public func record(_ diagnostic: Diagnostic) {
        let level: Logger.Level = switch diagnostic.level {
        case .debug: .debug
        case .info: .info
        case .warning: .warning
        case .error: .error
        }
        logger.log(level: level, "\(diagnostic.message)")
    }
}
