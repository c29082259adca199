import Foundation
import SDKAuthorization
import SDKAuthorizationEngagement
import Synchronization

/// What an app sees when it gets the setup wrong: configuration fails with the vendors'
/// documented messages, logged at error level, and the SDK stays unconfigured.
public enum MisconfigurationSample {
    /// Collects what the framework logs instead of printing it.
    final class CollectingSink: DiagnosticsSink, Sendable {
        private let messages = Mutex<[String]>([])
        func record(_ diagnostic: Diagnostic) {
            if diagnostic.level == .error { messages.withLock { $0.append(diagnostic.message) } }
        }
        var errors: [String] { messages.withLock { $0 } }
    }

    final class NotAProvider: NSObject {}
    /// A Swift class that is no `NSObject` subclass: the iOS convention refuses it.
    final class NotAnObjectiveCClass {}

    public static func run(_ environment: SampleEnvironment) -> [ReportRow] {
        var rows: [ReportRow] = []
        /// `logged`: the client logs provider-lookup failures; a bad value in the configuration itself
        /// is only thrown (there is no client, so no sink, yet).
        func attempt(_ what: String, expected: String, logged: Bool = true, _ make: (CollectingSink) throws -> Void) {
            let sink = CollectingSink()
            var message = "configured (unexpected)"
            do { try make(sink) } catch let error as ConfigurationError { message = error.message } catch { message = "\(error)" }
            rows.append(ReportRow(mode: "misconfigured", endpoint: what, header: "-", verdict: message,
                                  asExpected: message == expected && sink.errors == (logged ? [expected] : [])))
        }
        attempt("no ExponeaAuthProvider", expected: "Advanced authorization flag has been enabled without provider") { sink in
            _ = try AuthorizedHTTPClient(configuration: environment.configuration(advancedAuthEnabled: true), diagnostics: sink)
        }
        attempt("provider not conforming", expected: "Class ExponeaAuthProvider does not conform to AuthorizationProviderType") { sink in
            let registry = ProviderRegistry()
            registry.register(NotAProvider.self, as: "ExponeaAuthProvider")
            _ = try AuthorizedHTTPClient(configuration: environment.configuration(advancedAuthEnabled: true), registry: registry, diagnostics: sink)
        }
        attempt("provider not an NSObject", expected: "Class ExponeaAuthProvider does not conform to NSObject") { sink in
            let registry = ProviderRegistry()
            registry.register(NotAnObjectiveCClass.self, as: "ExponeaAuthProvider")
            _ = try AuthorizedHTTPClient(configuration: environment.configuration(advancedAuthEnabled: true), registry: registry, diagnostics: sink)
        }
        attempt("no provider class named", expected: "Advanced auth has been enabled but provider has not been found") { sink in
            let configuration = try environment.configuration(advancedAuthEnabled: true, providerLookup: .registeredClassName(nil))
            _ = try AuthorizedHTTPClient(configuration: configuration, diagnostics: sink)
        }
        attempt("class not implementing the protocol", expected: "Registered MyApp.NotAProvider class has to implement SDKAuthorization.AuthorizationProviderType") { sink in
            let registry = ProviderRegistry()
            registry.register(NotAProvider.self, as: "MyApp.NotAProvider")
            let configuration = try environment.configuration(advancedAuthEnabled: true, providerLookup: .registeredClassName("MyApp.NotAProvider"))
            _ = try AuthorizedHTTPClient(configuration: configuration, registry: registry, diagnostics: sink)
        }
        attempt("class name not found", expected: "Registered MyApp.ExampleAuthProvider class has not been found") { sink in
            let configuration = try environment.configuration(advancedAuthEnabled: true, providerLookup: .registeredClassName("MyApp.ExampleAuthProvider"))
            _ = try AuthorizedHTTPClient(configuration: configuration, diagnostics: sink)
        }
        attempt("Basic authorization", expected: "Basic authentication is not supported by mobile SDK for security reasons.", logged: false) { _ in
            _ = try AuthorizationConfiguration(projectToken: "p", baseURL: environment.baseURL.absoluteString, authorization: "Basic dXNlcjpwYXNz")
        }
        return rows
    }
}
