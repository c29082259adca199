import Foundation
import SDKAuthorization

// The codes of a configuration read from a file or made by a registry: the file reader
// (`ConfigurationFile`) and the registry (`ProviderRegistry`) live in this kit, and so do the errors
// only they throw. The core's own codes are about what any configuration may get wrong.

extension ConfigurationError.Code {
    /// A configuration file names keys this framework does not know; its `keys` list them.
    public static let unknownKeys = ConfigurationError.Code(rawValue: "unknownKeys")
    /// A configuration file gives a key a value of the wrong type.
    public static let wrongType = ConfigurationError.Code(rawValue: "wrongType")
    /// A configuration file could not be parsed.
    public static let malformedFile = ConfigurationError.Code(rawValue: "malformedFile")
    /// A configuration file could not be read.
    public static let unreadableFile = ConfigurationError.Code(rawValue: "unreadableFile")
    /// A configuration file is larger than the reader's limit (``ConfigurationFile/maximumSize``, 64 KB).
    public static let fileTooLarge = ConfigurationError.Code(rawValue: "fileTooLarge")
    /// A configuration file names a key twice.
    public static let duplicateKey = ConfigurationError.Code(rawValue: "duplicateKey")
    /// A value starts or ends with white space, which would change its meaning.
    public static let surroundingWhitespace = ConfigurationError.Code(rawValue: "surroundingWhitespace")
    /// A registered provider factory threw while creating the provider.
    public static let providerCreationFailed = ConfigurationError.Code(rawValue: "providerCreationFailed")
}

extension ConfigurationError {
    /// A configuration file names `keys`, which this framework does not know.
    public static func unknownKeys(_ keys: [String]) -> ConfigurationError {
        ConfigurationError(.unknownKeys, "Unknown configuration keys: \(keys.sorted().map { LogText.escaped($0, limit: 64) }.joined(separator: ", ")).",
                           keys: keys)
    }

    /// A configuration file gives `key` a value of the wrong type; it must be `expected`.
    public static func wrongType(key: String, expected: String) -> ConfigurationError {
        ConfigurationError(.wrongType, "The configuration key '\(key)' must be \(expected).", key: key, expected: expected)
    }

    /// A configuration file could not be parsed, for `reason`.
    public static func malformedFile(reason: String) -> ConfigurationError {
        ConfigurationError(.malformedFile, "The configuration file is malformed: \(reason).", reason: reason)
    }

    /// The configuration file at `path` could not be read, for `reason`.
    public static func unreadableFile(path: String, reason: String) -> ConfigurationError {
        ConfigurationError(.unreadableFile, "The configuration file at \(LogText.escaped(path, limit: 256)) could not be read: \(reason).",
                           reason: reason, path: path)
    }

    /// A configuration file is larger than `limit` bytes.
    public static func fileTooLarge(limit: Int) -> ConfigurationError {
        ConfigurationError(.fileTooLarge, "The configuration file is larger than \(limit) bytes; it was not read.", limit: limit)
    }

    /// A configuration file names `key` twice; tools disagree on which value wins, so neither does.
    public static func duplicateKey(_ key: String) -> ConfigurationError {
        ConfigurationError(.duplicateKey, "The configuration key \(LogText.escaped(key, limit: 64)) appears more than once.", key: key)
    }

    /// The value of `key` starts or ends with white space, which would change its meaning.
    public static func surroundingWhitespace(key: String) -> ConfigurationError {
        ConfigurationError(.surroundingWhitespace, "The configuration key '\(key)' starts or ends with white space; remove it.", key: key)
    }

    /// The provider factory registered as `name` threw while creating the provider, for `reason`.
    public static func providerCreationFailed(name: String, reason: String) -> ConfigurationError {
        ConfigurationError(.providerCreationFailed,
                           "The authorization provider registered as \(LogText.typeName(name)) could not be created: \(LogText.readable(reason, limit: 200))",
                           reason: reason, name: name)
    }

    /// Why `url` is no endpoint a mode may send a secret to (a signed payload, a token request, a
    /// proof), or `nil` when it is one: an absolute `https` URL with a host (`http` on a loopback
    /// host only: `localhost`, `127.0.0.0/8`, `[::1]`), no user info, query or fragment. The reason
    /// never repeats a password or a query. A mode's URL key is checked with it when declared with
    /// ``ModeSettingKey/secureEndpoint(_:required:purpose:)``:
    ///
    /// ```swift
    /// extension PartnerTokenMode {
    ///     static let partnerTokenURL = ModeSettingKey.secureEndpoint("partnerTokenURL", purpose: "Where tokens are fetched")
    /// }
    /// ```
    public static func problem(withSecureEndpoint url: URL) -> String? {
        let shown = "'\(sanitizedURLText(url.absoluteString))'"
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = components.host, !host.isEmpty,
              components.query == nil, components.fragment == nil,
              let checkedHost = HostName.host(of: url)
        else { return "\(shown) is not an absolute https URL with a host (and no query or fragment)" }
        guard components.user == nil, components.password == nil else {
            return "user info ('user:password@') is not allowed in \(shown)"
        }
        guard scheme == "https" || HostName.isLoopback(checkedHost) else {
            // What goes there would cross the network in the clear.
            return "\(shown) uses http, which is allowed only on a loopback host (localhost, 127.0.0.0/8, [::1]); use https"
        }
        return nil
    }
}
