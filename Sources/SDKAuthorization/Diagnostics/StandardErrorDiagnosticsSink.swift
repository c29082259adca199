import Foundation

/// A ``DiagnosticsSink`` that writes each diagnostic at or above a minimum level to standard error.
///
/// Opt in by passing it where a `diagnostics:` parameter is taken. Without one, the framework uses
/// ``DefaultDiagnosticsSink``, which is silent in release builds.
public struct StandardErrorDiagnosticsSink: DiagnosticsSink {
    /// Diagnostics below this level are dropped.
    public var minimumLevel: DiagnosticLevel

    /// Creates a sink that writes diagnostics at `minimumLevel` or above (default: warning).
    public init(minimumLevel: DiagnosticLevel = .warning) {
        self.minimumLevel = minimumLevel
    }

    public func record(_ diagnostic: Diagnostic) {
        guard diagnostic.level >= minimumLevel else { return }
        FileHandle.standardError.write(Data((diagnostic.description + "\n").utf8))
    }
}

/// The sink every `diagnostics:` parameter defaults to: silent in release builds, as a library
/// should be; in debug builds it writes warnings and errors to standard error, so a misconfigured
/// provider shows up while you develop.
///
/// Errors the framework throws are unaffected: they reach your code whatever the sink. To keep the
/// messages in release builds, pass a sink of your own (SDKAuthorizationLogging routes them to
/// swift-log) or ``StandardErrorDiagnosticsSink``.
public struct DefaultDiagnosticsSink: DiagnosticsSink {
    /// Creates the default sink.
    public init() {}

    public func record(_ diagnostic: Diagnostic) {
        #if DEBUG
        StandardErrorDiagnosticsSink().record(diagnostic)
        #endif
    }
}
