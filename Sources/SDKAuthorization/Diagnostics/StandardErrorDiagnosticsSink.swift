import Foundation

/// A ``DiagnosticsSink`` that writes each diagnostic at or above a minimum level to standard error.
/// Opt in by passing it where a `diagnostics:` parameter is taken.
public struct StandardErrorDiagnosticsSink: DiagnosticsSink {
    /// Diagnostics below this level are dropped.
    public var minimumLevel: Diagnostic.Level
    /// Whether it writes in release builds too; ``inDebugBuilds`` does not.
    public var writesInReleaseBuilds: Bool

    /// Creates a sink that writes diagnostics at `minimumLevel` or above (default: warning), in
    /// debug and release builds.
    public init(minimumLevel: Diagnostic.Level = .warning) {
        self.minimumLevel = minimumLevel
        self.writesInReleaseBuilds = true
    }

    /// The sink every `diagnostics:` parameter defaults to: silent in release builds, as a library
    /// should be; in debug builds it writes warnings and errors to standard error, so a
    /// misconfigured provider shows up while you develop. Errors the framework throws reach your
    /// code whatever the sink; to keep the messages in release builds, pass a sink of your own or
    /// ``init(minimumLevel:)``.
    public static let inDebugBuilds: StandardErrorDiagnosticsSink = {
        var sink = StandardErrorDiagnosticsSink()
        sink.writesInReleaseBuilds = false
        return sink
    }()

    public func record(_ diagnostic: Diagnostic) {
        #if !DEBUG
        guard writesInReleaseBuilds else { return }
        #endif
        guard diagnostic.level >= minimumLevel else { return }
        FileHandle.standardError.write(Data((diagnostic.description + "\n").utf8))
    }
}
