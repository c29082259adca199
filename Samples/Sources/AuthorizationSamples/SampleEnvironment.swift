import Foundation
import ReferenceBackend
import SDKAuthorization
import SDKAuthorizationEngagement

/// Where a sample sends its requests: a reference backend started in this process on a free
/// loopback port, or one already running at a URL given with `--backend-url`.
public struct SampleEnvironment: Sendable {
    /// The backend's base URL; it plays both the app's own server and the vendor's API.
    public let baseURL: URL
    /// The API key the backend accepts.
    public let apiKey: String
    /// The Engagement project token.
    public let projectToken: String
    /// The embedded backend, when this process started it.
    public let embedded: ReferenceBackend?

    /// The default API key and project token of an embedded backend.
    public static let defaultAPIKey = "sample-api-key"
    public static let defaultProjectToken = "sample-project"

    /// Reads `--backend-url URL`, `--api-key KEY` and `--project-token TOKEN` from the command line;
    /// without `--backend-url`, starts an embedded backend.
    public static func fromCommandLine(_ arguments: [String] = CommandLine.arguments) async throws -> SampleEnvironment {
        func value(_ flag: String) -> String? {
            guard let index = arguments.firstIndex(of: flag), arguments.indices.contains(index + 1) else { return nil }
            return arguments[index + 1]
        }
        let apiKey = value("--api-key") ?? defaultAPIKey
        let projectToken = value("--project-token") ?? defaultProjectToken
        if let url = value("--backend-url") {
            guard let baseURL = URL(string: url), baseURL.host != nil else { throw SampleError("--backend-url \(url) is not a URL") }
            return SampleEnvironment(baseURL: baseURL, apiKey: apiKey, projectToken: projectToken, embedded: nil)
        }
        return try await embedded(apiKey: apiKey, projectToken: projectToken)
    }

    /// Starts an embedded backend on a free loopback port.
    public static func embedded(
        apiKey: String = defaultAPIKey,
        projectToken: String = defaultProjectToken,
        bearerRequiredEndpoints: Set<EngagementEndpoint> = [.appInboxFetch, .appInboxMarkAsRead]
    ) async throws -> SampleEnvironment {
        let backend = try await ReferenceBackend.start(.init(
            apiKeys: [apiKey], projectToken: projectToken, bearerRequiredEndpoints: bearerRequiredEndpoints
        ))
        return SampleEnvironment(baseURL: backend.baseURL, apiKey: apiKey, projectToken: projectToken, embedded: backend)
    }

    /// Stops the embedded backend, if any.
    public func shutdown() async {
        await embedded?.stop()
    }

    /// An Engagement configuration for this backend.
    public func configuration(advancedAuthEnabled: Bool = false, providerLookup: ProviderLookup = .default) throws -> AuthorizationConfiguration {
        try AuthorizationConfiguration(
            projectToken: projectToken,
            baseURL: baseURL.absoluteString,
            authorization: "Token \(apiKey)",
            advancedAuthEnabled: advancedAuthEnabled,
            providerLookup: providerLookup
        )
    }
}

/// A sample's own failure, with a readable message.
public struct SampleError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
