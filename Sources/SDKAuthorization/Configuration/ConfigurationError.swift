/// Why a configuration was refused. Its ``message`` is the text the framework also logs at error level.
///
/// The provider-lookup cases carry the exact messages that the Exponea SDKs document, so an app's
/// existing troubleshooting guide keeps working.
public enum ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A `Basic ...` authorization was configured.
    case basicAuthenticationNotSupported
    /// A credential is empty or only white space.
    case emptyCredential(field: String)
    /// A credential holds a CR, LF or other control character (header injection).
    case credentialContainsControlCharacters(field: String)
    /// The project token is empty.
    case emptyProjectToken
    /// The base URL is not an absolute `http` or `https` URL with a host.
    case invalidBaseURL(String)
    /// A configuration file names keys this framework does not know.
    case unknownKeys([String])
    /// A configuration file gives a key a value of the wrong type.
    case wrongType(key: String, expected: String)
    /// A configuration file lacks a required key.
    case missingKey(String)
    /// A configuration file gives a key a value outside its allowed set.
    case invalidValue(key: String, reason: String)
    /// A configuration file could not be parsed.
    case malformedFile(reason: String)
    /// A configuration file could not be read.
    case unreadableFile(path: String, reason: String)
    /// A configuration file is larger than `AuthorizationConfiguration.maximumFileSize`.
    case fileTooLarge(limit: Int)
    /// A configuration file names a key twice; tools disagree on which value wins, so neither does.
    case duplicateKey(String)
    /// A value starts or ends with white space, which would change its meaning.
    case surroundingWhitespace(key: String)

    /// iOS convention: advanced auth is enabled but no type is registered under the provider name.
    case advancedAuthEnabledWithoutProvider
    /// iOS convention: the type found under the name is not an `NSObject` subclass.
    case providerIsNotNSObject(name: String)
    /// iOS convention: the type found does not conform to `AuthorizationProviderType`.
    case providerDoesNotConform(name: String)
    /// Android convention: advanced auth is enabled but no provider class is named.
    case advancedAuthEnabledButProviderNotNamed
    /// Android convention: the named class cannot be found.
    case registeredClassNotFound(name: String)
    /// Android convention: the named class does not implement `AuthorizationProviderType`.
    case registeredClassDoesNotImplement(name: String)
    /// A registered provider factory threw while creating the provider.
    case providerCreationFailed(name: String, reason: String)

    /// The policy sends a customer token to endpoints, but advanced auth is disabled, so no provider exists.
    case customerTokenEndpointsWithoutAdvancedAuth([String])
    /// A provider was passed to the client, but advanced auth is disabled, so it would never be asked.
    case providerWithoutAdvancedAuth
    /// The policy names a scheme for which no provider was given.
    case missingProvider(scheme: String, endpoints: [String])
    /// An endpoint was added twice to the policy.
    case duplicateEndpoint(String)
    /// The policy was asked to change an endpoint it does not hold.
    case unknownEndpoint(String)

    /// The message logged at error level and shown to the developer.
    public var message: String {
        switch self {
        case .basicAuthenticationNotSupported:
            "Basic authentication is not supported by mobile SDK for security reasons."
        case .emptyCredential(let field):
            "The \(field) is empty; a credential must not be empty."
        case .credentialContainsControlCharacters(let field):
            "The \(field) contains a control character (CR, LF or another); it would break the HTTP header and is refused."
        case .emptyProjectToken:
            "The projectToken is empty."
        case .invalidBaseURL(let value):
            "The baseURL '\(value)' is not an absolute http or https URL with a host (and no query or fragment)."
        case .unknownKeys(let keys):
            "Unknown configuration keys: \(keys.sorted().map { LogText.escaped($0, limit: 64) }.joined(separator: ", "))."
        case .fileTooLarge(let limit):
            "The configuration file is larger than \(limit) bytes; it was not read."
        case .duplicateKey(let key):
            "The configuration key \(LogText.escaped(key, limit: 64)) appears more than once."
        case .surroundingWhitespace(let key):
            "The configuration key '\(key)' starts or ends with white space; remove it."
        case .wrongType(let key, let expected):
            "The configuration key '\(key)' must be \(expected)."
        case .missingKey(let key):
            "The configuration key '\(key)' is required."
        case .invalidValue(let key, let reason):
            "The configuration key '\(key)' is invalid: \(reason)."
        case .malformedFile(let reason):
            "The configuration file is malformed: \(reason)."
        case .unreadableFile(let path, let reason):
            "The configuration file at \(LogText.escaped(path, limit: 256)) could not be read: \(reason)."
        case .advancedAuthEnabledWithoutProvider:
            "Advanced authorization flag has been enabled without provider"
        case .providerIsNotNSObject(let name):
            "Class \(LogText.typeName(name)) does not conform to NSObject"
        case .providerDoesNotConform(let name):
            "Class \(LogText.typeName(name)) does not conform to AuthorizationProviderType"
        case .advancedAuthEnabledButProviderNotNamed:
            "Advanced auth has been enabled but provider has not been found"
        case .registeredClassNotFound(let name):
            "Registered \(LogText.typeName(name)) class has not been found"
        case .registeredClassDoesNotImplement(let name):
            // The protocol's name as the message has always given it; `String(reflecting:)` would now
            // name its module, SDKAuthorizationEngagement.
            "Registered \(LogText.typeName(name)) class has to implement SDKAuthorization.AuthorizationProviderType"
        case .providerCreationFailed(let name, let reason):
            "The authorization provider registered as \(LogText.plain(name)) could not be created: \(reason)"
        case .customerTokenEndpointsWithoutAdvancedAuth(let endpoints):
            "Endpoints \(endpoints.sorted().joined(separator: ", ")) need a customer token, but advancedAuthEnabled is false."
        case .providerWithoutAdvancedAuth:
            "A customer-token provider was given, but advancedAuthEnabled is false; enable advanced auth or pass no provider."
        case .missingProvider(let scheme, let endpoints):
            "The policy sends \(scheme) credentials (\(endpoints.joined(separator: ", "))), but no provider is given for the \(scheme) scheme."
        case .duplicateEndpoint(let id):
            "The endpoint \(id) is already in the policy."
        case .unknownEndpoint(let id):
            "The endpoint \(id) is not in the policy."
        }
    }

    public var description: String { message }

    /// Refuses a credential that is empty (or blank) or holds a character a header cannot carry,
    /// naming `field` in the error.
    package static func checkCredential(_ credential: String, field: String) throws(ConfigurationError) {
        switch HeaderFieldRules.check(credential) {
        case .valid: return
        case .empty: throw .emptyCredential(field: field)
        case .forbiddenCharacters: throw .credentialContainsControlCharacters(field: field)
        }
    }

    /// `value` without user info, query or fragment, escaped and cut: what a message may repeat of
    /// a URL that may hold a password or a secret query.
    package static func sanitizedURLText(_ value: String) -> String {
        // Unicode scalars, not Characters: a combining mark after '@' or '?' must not hide it.
        var scalars = Array(value.unicodeScalars)
        var suffix = ""
        if let cut = scalars.firstIndex(where: { $0 == "?" || $0 == "#" }) {
            scalars.removeSubrange(cut...)
            suffix = "?..."
        }
        let schemeEnd = scalars.indices.first { index in
            index + 2 < scalars.count && scalars[index] == ":" && scalars[index + 1] == "/" && scalars[index + 2] == "/"
        }
        let authorityStart = schemeEnd.map { $0 + 3 } ?? 0
        let authorityEnd = scalars[authorityStart...].firstIndex(of: "/") ?? scalars.endIndex
        if let at = scalars[authorityStart..<authorityEnd].lastIndex(of: "@") {
            scalars.replaceSubrange(authorityStart...at, with: "...@".unicodeScalars)
        }
        var text = String.UnicodeScalarView()
        text.append(contentsOf: scalars)
        return LogText.plain(String(text), limit: 128) + suffix
    }

}
