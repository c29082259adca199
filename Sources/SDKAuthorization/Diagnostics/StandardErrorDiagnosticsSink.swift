import Foundation

/// The default ``DiagnosticsSink``: writes each diagnostic at or above a minimum level to standard error.
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
