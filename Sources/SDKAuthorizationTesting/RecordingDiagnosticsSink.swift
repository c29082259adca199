import SDKAuthorization

/// A diagnostics sink that keeps every diagnostic, for assertions.
public final class RecordingDiagnosticsSink: DiagnosticsSink, Sendable {
    private let recorded = TestingLock<[Diagnostic]>([])

    /// Creates an empty sink.
    public init() {}

    public func record(_ diagnostic: Diagnostic) {
        recorded.withLock { $0.append(diagnostic) }
    }

    /// Every diagnostic so far, in order.
    public var diagnostics: [Diagnostic] { recorded.withLock { $0 } }

    /// The messages recorded at `level`.
    public func messages(at level: Diagnostic.Level) -> [String] {
        diagnostics.filter { $0.level == level }.map(\.message)
    }
}
