import SDKAuthorization
import SDKAuthorizationModeKit

// The Engagement (Exponea) configuration's own error codes: the provider-lookup messages the Exponea
// SDKs document, word for word, and what its configuration refuses. The core knows none of them; they
// are codes added in an extension, as any mode adds its own.

extension ConfigurationError.Code {
    /// A `Basic ...` authorization was configured.
    public static let basicAuthenticationNotSupported = Self(rawValue: "basicAuthenticationNotSupported")
    /// The project token is empty.
    public static let emptyProjectToken = Self(rawValue: "emptyProjectToken")
    /// The base URL is not an absolute `http` or `https` URL with a host; `ConfigurationError.value` repeats it.
    public static let invalidBaseURL = Self(rawValue: "invalidBaseURL")
    /// iOS convention: advanced auth is enabled but no type is registered under the provider name.
    public static let advancedAuthEnabledWithoutProvider = Self(rawValue: "advancedAuthEnabledWithoutProvider")
    /// iOS convention: the type found under the name is not an `NSObject` subclass.
    public static let providerIsNotNSObject = Self(rawValue: "providerIsNotNSObject")
    /// iOS convention: the type found does not conform to `AuthorizationProviderType`.
    public static let providerDoesNotConform = Self(rawValue: "providerDoesNotConform")
    /// Android convention: advanced auth is enabled but no provider class is named.
    public static let advancedAuthEnabledButProviderNotNamed = Self(rawValue: "advancedAuthEnabledButProviderNotNamed")
    /// Android convention: the named class cannot be found.
    public static let registeredClassNotFound = Self(rawValue: "registeredClassNotFound")
    /// Android convention: the named class does not implement `AuthorizationProviderType`.
    public static let registeredClassDoesNotImplement = Self(rawValue: "registeredClassDoesNotImplement")
    /// The policy sends a customer token to endpoints, but advanced auth is disabled.
    public static let customerTokenEndpointsWithoutAdvancedAuth = Self(rawValue: "customerTokenEndpointsWithoutAdvancedAuth")
    /// A provider was passed to the client, but advanced auth is disabled.
    public static let providerWithoutAdvancedAuth = Self(rawValue: "providerWithoutAdvancedAuth")
}

extension ConfigurationError {
    private static func make(_ code: Code, _ message: String, name: String? = nil, value: String? = nil, endpoints: [String]? = nil) -> ConfigurationError {
        ConfigurationError(code, message, value: value, name: name, endpoints: endpoints)
    }

    /// A `Basic ...` authorization was configured.
    public static let basicAuthenticationNotSupported: ConfigurationError = make(.basicAuthenticationNotSupported, "Basic authentication is not supported by mobile SDK for security reasons.")

    /// The project token is empty.
    public static let emptyProjectToken: ConfigurationError = make(.emptyProjectToken, "The projectToken is empty.")

    /// The base URL `value` is not an absolute `http` or `https` URL with a host; pass it
    /// sanitized, since the message repeats it.
    public static func invalidBaseURL(_ value: String) -> ConfigurationError {
        make(.invalidBaseURL, "The baseURL '\(value)' is not an absolute http or https URL with a host (and no query or fragment).", value: value)
    }

    /// iOS convention: advanced auth is enabled but no type is registered under the provider name.
    public static let advancedAuthEnabledWithoutProvider: ConfigurationError = make(.advancedAuthEnabledWithoutProvider, "Advanced authorization flag has been enabled without provider")

    /// iOS convention: the type found under `name` is not an `NSObject` subclass.
    public static func providerIsNotNSObject(name: String) -> ConfigurationError {
        make(.providerIsNotNSObject, "Class \(LogText.typeName(name)) does not conform to NSObject", name: name)
    }

    /// iOS convention: the type found under `name` does not conform to `AuthorizationProviderType`.
    public static func providerDoesNotConform(name: String) -> ConfigurationError {
        make(.providerDoesNotConform, "Class \(LogText.typeName(name)) does not conform to AuthorizationProviderType", name: name)
    }

    /// Android convention: advanced auth is enabled but no provider class is named.
    public static let advancedAuthEnabledButProviderNotNamed: ConfigurationError = make(.advancedAuthEnabledButProviderNotNamed, "Advanced auth has been enabled but provider has not been found")

    /// Android convention: the class named `name` cannot be found.
    public static func registeredClassNotFound(name: String) -> ConfigurationError {
        make(.registeredClassNotFound, "Registered \(LogText.typeName(name)) class has not been found", name: name)
    }

    /// Android convention: the class named `name` does not implement `AuthorizationProviderType`.
    public static func registeredClassDoesNotImplement(name: String) -> ConfigurationError {
        make(.registeredClassDoesNotImplement,
             // The protocol's name as the message has always given it; `String(reflecting:)` would now
             // name its module, SDKAuthorizationEngagement.
             "Registered \(LogText.typeName(name)) class has to implement SDKAuthorization.AuthorizationProviderType", name: name)
    }

    /// The policy sends a customer token to `endpoints`, but advanced auth is disabled, so no provider exists.
    public static func customerTokenEndpointsWithoutAdvancedAuth(_ endpoints: [String]) -> ConfigurationError {
        make(.customerTokenEndpointsWithoutAdvancedAuth,
             "Endpoints \(endpoints.sorted().joined(separator: ", ")) need a customer token, but advancedAuthEnabled is false.", endpoints: endpoints)
    }

    /// `key` sets a setting of the mode `mode`, but advanced auth is disabled, so no provider is
    /// made and the key would be ignored.
    static func keyIgnoredWithoutAdvancedAuth(_ key: String, mode: String?) -> ConfigurationError {
        let owner = mode.map { "the mode \(LogText.typeName($0))" } ?? "a mode"
        let reason = "it would be ignored: it is a setting of \(owner), which is used only with advancedAuthEnabled true; set advancedAuthEnabled to true, or remove the key"
        // A key set in code may be any text: shown escaped and bounded, as every unknown key is.
        return ConfigurationError(.invalidValue, "The configuration key \(LogText.escaped(key, limit: 64)) is invalid: \(reason).", key: key, reason: reason)
    }

    /// A provider was passed to the client, but advanced auth is disabled, so it would never be asked.
    public static let providerWithoutAdvancedAuth: ConfigurationError = make(.providerWithoutAdvancedAuth,
        "A customer-token provider was given, but advancedAuthEnabled is false; enable advanced auth or pass no provider.")
}

extension ConfigurationError {
    /// The codes whose messages the Exponea SDKs document word for word (SPEC): their message never
    /// changes, and the file they concern goes in ``path`` only.
    static let documentedLookupCodes: Set<Code> = [
        .advancedAuthEnabledWithoutProvider, .providerIsNotNSObject, .providerDoesNotConform,
        .advancedAuthEnabledButProviderNotNamed, .registeredClassNotFound, .registeredClassDoesNotImplement,
    ]

    /// This error placed in the configuration file `file` (when the configuration was read from
    /// one): its ``path`` is the file's, and, unless its message is one the Exponea SDKs document,
    /// the message ends with `(in authorization.json)` or, with a position,
    /// `(in authorization.json, line 3, column 1)`.
    func placed(in file: AuthorizationConfiguration.SourceFile, line: Int? = nil, column: Int? = nil) -> ConfigurationError {
        var place = file.name.map { "in \(LogText.escaped($0, limit: 128))" }
        if let line, let column {
            place = (place.map { $0 + ", " } ?? "at ") + "line \(line), column \(column)"
        }
        guard let place else { return self }
        let message = Self.documentedLookupCodes.contains(code) ? self.message : "\(self.message) (\(place))"
        return ConfigurationError(code, message, field: field, key: key, keys: keys, value: value, expected: expected, reason: reason,
                                  path: file.path ?? path, limit: limit, name: name, scheme: scheme, endpoint: endpoint, endpoints: endpoints)
    }
}
