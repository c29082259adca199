import Foundation
import ProviderRegistrationGenerator
import SDKAuthorization
import SDKAuthorizationEngagement

/// Checks one configuration file as the framework reads it and as a client made from it starts.
///
/// Two passes, each with the framework's own code, so each message is the one the framework logs:
/// 1. `AuthorizationConfiguration(contentsOf:)`: syntax, keys, types and values;
/// 2. `AuthorizedHTTPClient(configuration:registry:...)` with the default Engagement policy: the
///    project `authorization` is present, and with advanced auth on, the provider is named and
///    found. The registry holds the built-in modes (linked into the doctor) and every provider the
///    target's ``ProviderManifest`` declares; nothing is sent.
///
/// Without a manifest the doctor cannot see providers the app registers in code, so a provider that
/// is not found is a warning (with the message the client will log if it is indeed missing); with a
/// manifest it is an error.
package enum ConfigurationCheck {
    /// The findings for the file at `url`, shown as `displayPath`. `manifest` is the target's
    /// provider manifest, if it has one.
    package static func check(_ url: URL, displayPath: String, manifest: ProviderManifest?) -> [Finding] {
        let configuration: AuthorizationConfiguration
        do {
            configuration = try AuthorizationConfiguration(contentsOf: url)
        } catch {
            return [Finding(.error, file: displayPath, key: key(of: error), error.message)]
        }
        var findings: [Finding] = []
        var firstError = startUpError(configuration, manifest: manifest)
        // The client checks the project authorization before the provider and stops at the first
        // refusal; look past a missing authorization so both are reported in one run.
        if let error = firstError, error.code == .missingKey, error.key == "authorization" {
            findings.append(Finding(.error, file: displayPath, key: "authorization", error.message))
            firstError = (try? withPlaceholderAuthorization(configuration)).flatMap { startUpError($0, manifest: manifest) }
        }
        if let error = firstError {
            findings.append(finding(for: error, file: displayPath, manifest: manifest))
        }
        if findings.isEmpty {
            findings.append(Finding(.note, file: displayPath, "ok: \(summary(configuration))"))
        }
        return findings
    }

    /// The error a client made from `configuration` would refuse to start with, if any.
    static func startUpError(_ configuration: AuthorizationConfiguration, manifest: ProviderManifest?) -> ConfigurationError? {
        let registry = ProviderRegistry()
        for entry in manifest?.entries ?? [] {
            registry.register(name: entry.name) { _ in DeclaredProvider() }
        }
        do {
            _ = try AuthorizedHTTPClient(configuration: configuration, registry: registry, transport: NoTransport(), diagnostics: SilentSink())
            return nil
        } catch {
            return error
        }
    }

    /// A provider-lookup failure without a manifest may be a provider registered in code: a warning.
    static func finding(for error: ConfigurationError, file: String, manifest: ProviderManifest?) -> Finding {
        let notFound: Set<ConfigurationError.Code> = [.advancedAuthEnabledWithoutProvider, .registeredClassNotFound]
        guard manifest == nil, notFound.contains(error.code) else {
            return Finding(.error, file: file, key: key(of: error), error.message)
        }
        return Finding(.warning, file: file, key: key(of: error),
                       "\(error.message) (unless the app registers this provider in code; declare it in \(ProviderManifest.fileName) to have it checked)")
    }

    private static func withPlaceholderAuthorization(_ configuration: AuthorizationConfiguration) throws(ConfigurationError) -> AuthorizationConfiguration {
        try AuthorizationConfiguration(
            projectToken: configuration.projectToken, baseURL: configuration.baseURL.absoluteString, authorization: "Token doctor-placeholder",
            advancedAuthEnabled: configuration.advancedAuthEnabled, providerLookup: configuration.providerLookup,
            customerTokenCaching: configuration.customerTokenCaching)
    }

    /// The file key an error is about.
    static func key(of error: ConfigurationError) -> String? {
        if let key = error.key { return key }
        if let keys = error.keys { return keys.joined(separator: ", ") }
        switch error.code {
        case .emptyProjectToken: return "projectToken"
        case .invalidBaseURL: return "baseURL"
        case .basicAuthenticationNotSupported: return "authorization"
        case .emptyCredential, .credentialContainsControlCharacters: return error.field == "projectToken" ? "projectToken" : "authorization"
        case .advancedAuthEnabledWithoutProvider, .providerIsNotNSObject, .providerDoesNotConform, .advancedAuthEnabledButProviderNotNamed,
             .registeredClassNotFound, .registeredClassDoesNotImplement, .providerCreationFailed:
            return "providerName"
        case .customerTokenEndpointsWithoutAdvancedAuth, .providerWithoutAdvancedAuth: return "advancedAuthEnabled"
        default: return nil
        }
    }

    /// What a good file configures; the credential is never shown.
    static func summary(_ configuration: AuthorizationConfiguration) -> String {
        let authorization = configuration.authorization.map(String.init(describing:)) ?? "no project authorization"
        guard configuration.advancedAuthEnabled else {
            return "project \(LogText.escaped(configuration.projectToken, limit: 64)) at \(configuration.baseURL.absoluteString), \(authorization), advanced auth off"
        }
        let lookup = switch configuration.providerLookup {
        case .implicitName(let name): "provider name \(LogText.typeName(name))"
        case .registeredClassName(let name): "registered class \(LogText.typeName(name ?? ""))"
        }
        return "project \(LogText.escaped(configuration.projectToken, limit: 64)) at \(configuration.baseURL.absoluteString), \(authorization), advanced auth on, \(lookup)"
    }
}

/// Stands in for a provider the manifest declares: the doctor only needs the name to resolve.
private struct DeclaredProvider: AuthorizationProvider {
    func credential(for context: AuthorizationContext) async throws -> Credential {
        throw CancellationError()
    }
}

/// The doctor sends nothing.
private struct NoTransport: HTTPTransport {
    func send(_ request: OutgoingRequest) async throws -> ServerResponse { throw CancellationError() }
}

/// The thrown error carries the message the client logs; the doctor prints that.
private struct SilentSink: DiagnosticsSink {
    func record(_ diagnostic: Diagnostic) {}
}
