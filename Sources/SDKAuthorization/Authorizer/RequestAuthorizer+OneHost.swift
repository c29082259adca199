import Foundation
internal import SDKAuthorizationPrimitives

extension RequestAuthorizer {
    /// The common case in one call: every request to `host` carries `Authorization: Bearer <token>`
    /// with the token `bearerToken` returns, and no other request carries anything.
    ///
    /// ```swift
    /// let authorizer = try RequestAuthorizer(host: "api.example.com") { try await session.accessToken() }
    /// let (data, response) = try await authorizer.data(for: URLRequest(url: profileURL), using: .shared)
    /// ```
    ///
    /// The same as a policy of one ``AuthorizationRule`` for `host` (read as
    /// ``AuthorizationRule/init(host:path:method:scheme:)`` reads it) with the
    /// ``AuthorizationScheme/bearer`` scheme and a provider answering ``Credential/bearer(_:)``;
    /// write those yourself for more than one host, a path, or a provider that refreshes
    /// (`RefreshingTokenProvider`). An error `bearerToken` throws fails that request.
    ///
    /// - Throws: ``ConfigurationError`` for a host pattern that is not one, with the spelling that works.
    public convenience init(
        host: String,
        options: AuthorizationOptions = AuthorizationOptions(),
        bearerToken: @escaping @Sendable () async throws -> String
    ) throws(ConfigurationError) {
        try self.init(
            policy: AuthorizationPolicy(rules: [AuthorizationRule(host: host, scheme: .bearer)]),
            providers: [.bearer: ClosureCredentialProvider(endsByDeadline: false) { .bearer(try await bearerToken()) }],
            options: options
        )
    }

    /// The common case for an API key: every request to `host` carries `<header>: <key>`, and no other
    /// request carries anything.
    ///
    /// ```swift
    /// let authorizer = try RequestAuthorizer(host: "api.example.com", apiKey: key, header: "X-API-Key")
    /// ```
    ///
    /// `host` is read as in ``init(host:options:bearerToken:)``; the key is sent as it is.
    ///
    /// - Throws: ``ConfigurationError`` for a host pattern that is not one, an empty key or one a
    ///   header cannot carry, or a header name that is not an HTTP field name a credential may use.
    public convenience init(
        host: String,
        apiKey: String,
        header: String,
        options: AuthorizationOptions = AuthorizationOptions()
    ) throws(ConfigurationError) {
        try ConfigurationError.checkCredential(apiKey, field: "apiKey")
        guard HeaderFieldRules.isValidName(header), !HeaderFieldRules.isTransportOwnedName(header) else {
            throw .invalidValue(key: "header", reason: "\(LogText.escaped(header, limit: 64)) is not a header name a credential may use")
        }
        let credential = Credential.apiKey(apiKey, header: header)
        try self.init(
            policy: AuthorizationPolicy(rules: [AuthorizationRule(host: host, scheme: .apiKey)]),
            // A constant answers at once: no task bounds it ("API key" rows of "1 prepare").
            providers: [.apiKey: ClosureCredentialProvider(endsByDeadline: true) { credential }],
            options: options
        )
    }
}

/// A provider whose credential is what a closure returns.
private struct ClosureCredentialProvider: AuthorizationProvider {
    /// `true` only for a closure of ours that answers at once; the app's closure may never answer,
    /// so its calls are bounded by the request's deadline.
    let endsByDeadline: Bool
    let credential: @Sendable () async throws -> Credential

    func credential(for context: AuthorizationContext) async throws -> Credential {
        try await credential()
    }
}
