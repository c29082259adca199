import AuthorizationSamples
import Foundation
import Logging
import SDKAuthorization
import SDKAuthorizationEngagement
import SDKAuthorizationLogging
import Synchronization
import Testing

/// Collects swift-log records, to check what reaches an app's own logger.
struct CollectingLogHandler: LogHandler {
    final class Store: Sendable {
        private let entries = Mutex<[(Logger.Level, String)]>([])
        func append(_ entry: (Logger.Level, String)) { entries.withLock { $0.append(entry) } }
        var all: [(Logger.Level, String)] { entries.withLock { $0 } }
    }

    let store: Store
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        store.append((event.level, event.message.description))
    }
}

@Suite("Diagnostics through the app's own logger", .timeLimit(.minutes(3)))
struct DiagnosticsEndToEndTests {
    @Test func configurationFailureReachesSwiftLogAtErrorLevel() throws {
        let store = CollectingLogHandler.Store()
        let logger = Logger(label: "test") { _ in CollectingLogHandler(store: store) }
        let configuration = try AuthorizationConfiguration(
            projectToken: "p", baseURL: "http://127.0.0.1:1", authorization: "Token k", advancedAuthEnabled: true,
            providerLookup: .registeredClassName("MyApp.ExampleAuthProvider")
        )
        #expect(throws: ConfigurationError.registeredClassNotFound(name: "MyApp.ExampleAuthProvider")) {
            try AuthorizedHTTPClient(configuration: configuration, diagnostics: SwiftLogDiagnosticsSink(logger: logger))
        }
        #expect(store.all.map(\.0) == [.error])
        #expect(store.all.map(\.1) == ["Registered MyApp.ExampleAuthProvider class has not been found"])
    }
}
