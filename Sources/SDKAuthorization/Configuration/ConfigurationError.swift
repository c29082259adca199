import Foundation
internal import SDKAuthorizationPrimitives

/// Why a configuration was refused. Its ``message`` is the text shown to the developer: the error is
/// thrown, and the framework does not also log it.
///
/// The core's codes are about what any configuration may get wrong (a credential, a key, a file, a
/// provider); a configuration or a mode adds codes of its own in an extension (``ErrorShape/Code``;
/// the Engagement mode's provider-lookup codes carry the exact messages the Exponea SDKs document).
/// Match on ``code`` and read the context from the properties that apply to it (``key``, ``field``,
/// ``name``, ``reason`` and so on); the others are `nil`.
///
/// ```swift
/// do {
///     configuration = try AuthorizationConfiguration(contentsOf: url)
/// } catch where error.code == .missingKey {
///     showSetupHelp(for: error.key)
/// } catch {
///     logger.error("\(error)")   // the message; never a credential
/// }
/// ```
///
/// Its texts, `dump` and equality are those of every error of the framework (``ErrorShape/Coded``):
/// the message repeats the context the developer needs (escaped and cut where it comes from a
/// file), so the context properties are not compared.
public struct ConfigurationError: ErrorShape.Coded {
    /// What went wrong, as a stable name a caller can match on.
    public struct Code: ErrorShape.Code {
        /// The code's name.
        public let rawValue: String
        /// Creates a code.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A credential is empty or only white space; ``ConfigurationError/field`` names it.
        public static let emptyCredential = Code(rawValue: "emptyCredential")
        /// A credential holds a CR, LF or other control character (header injection);
        /// ``ConfigurationError/field`` names it.
        public static let credentialContainsControlCharacters = Code(rawValue: "credentialContainsControlCharacters")
        /// A configuration file lacks a required key.
        public static let missingKey = Code(rawValue: "missingKey")
        /// A value is outside its allowed set.
        public static let invalidValue = Code(rawValue: "invalidValue")
        /// The policy names a scheme for which no provider was given.
        public static let missingProvider = Code(rawValue: "missingProvider")
        /// An endpoint was added twice to the policy.
        public static let duplicateEndpoint = Code(rawValue: "duplicateEndpoint")
        /// The policy was asked to change an endpoint it does not hold.
        public static let unknownEndpoint = Code(rawValue: "unknownEndpoint")
    }

    /// The context, in one shared box: an error is one reference wide, so every frame that may
    /// throw it stays small.
    private final class Storage: Sendable {
        let code: Code
        let message: String
        let context: Context

        init(code: Code, message: String, context: Context) {
            self.code = code
            self.message = message
            self.context = context
        }
    }

    /// The values an error was made from; each code sets the ones its factory takes.
    struct Context: Sendable {
        var field: String?
        var key: String?
        var keys: [String]?
        var value: String?
        var expected: String?
        var reason: String?
        var path: String?
        var limit: Int?
        var name: String?
        var scheme: String?
        var endpoint: String?
        var endpoints: [String]?
    }

    private let storage: Storage

    /// Creates an error with `code`, `message` (``ErrorShape/Coded/message``: name keys and fields,
    /// never a credential's value) and the context that applies to the code, for codes added in
    /// extensions; each context value is what the property of the same name returns.
    public init(
        _ code: Code, _ message: String, field: String? = nil, key: String? = nil, keys: [String]? = nil, value: String? = nil,
        expected: String? = nil, reason: String? = nil, path: String? = nil, limit: Int? = nil, name: String? = nil,
        scheme: String? = nil, endpoint: String? = nil, endpoints: [String]? = nil
    ) {
        self.init(code, message, context: Context(
            field: field, key: key, keys: keys, value: value, expected: expected, reason: reason, path: path, limit: limit,
            name: name, scheme: scheme, endpoint: endpoint, endpoints: endpoints
        ))
    }

    init(_ code: Code, _ message: String, context: Context) {
        storage = Storage(code: code, message: message, context: context)
    }

    /// This error with `hint` after its message, in parentheses: the documented message stays first
    /// and unchanged, so a search for it still finds the vendor's troubleshooting guide. The code and
    /// the context are kept. The registry adds "did you mean" and "link the product" hints this way.
    /// `hint` is shown as given, so escape what comes from a file.
    public func appendingHint(_ hint: String) -> ConfigurationError {
        ConfigurationError(code, "\(message) (\(hint))", context: storage.context)
    }

    /// What went wrong.
    public var code: Code { storage.code }
    /// The message shown to the developer (the vendors' documented wording where they have one).
    public var message: String { storage.message }

    /// The credential concerned (for example `projectToken` or `ID token`), for
    /// ``Code/emptyCredential`` and ``Code/credentialContainsControlCharacters``.
    public var field: String? { storage.context.field }
    /// The configuration key concerned, for ``Code/missingKey`` and ``Code/invalidValue`` (and the
    /// file reader's `wrongType`, `duplicateKey` and `surroundingWhitespace`).
    public var key: String? { storage.context.key }
    /// The unknown keys, in the order given, for the file reader's `unknownKeys`.
    public var keys: [String]? { storage.context.keys }
    /// The refused value as the message repeats it (the Engagement configuration's refused base URL,
    /// without user info, query or fragment).
    public var value: String? { storage.context.value }
    /// What the key's value must be, for the file reader's `wrongType`.
    public var expected: String? { storage.context.expected }
    /// Why the value or file was refused, for ``Code/invalidValue`` (and the file reader's
    /// `malformedFile` and `unreadableFile`, and the registry's `providerCreationFailed`).
    public var reason: String? { storage.context.reason }
    /// The file's path, for the file reader's `unreadableFile`, and for an error about a configuration read
    /// from a file (a missing key, a malformed file, a provider not found) when the reader knows it.
    public var path: String? { storage.context.path }
    /// The largest file read, in bytes, for the file reader's `fileTooLarge`.
    public var limit: Int? { storage.context.limit }
    /// The provider's type or registered name, for the provider-lookup codes a registry adds
    /// (`providerCreationFailed` among them).
    public var name: String? { storage.context.name }
    /// The scheme that has no provider, for ``Code/missingProvider``.
    public var scheme: String? { storage.context.scheme }
    /// The endpoint concerned, for ``Code/duplicateEndpoint`` and ``Code/unknownEndpoint``.
    public var endpoint: String? { storage.context.endpoint }
    /// The endpoints concerned, for ``Code/missingProvider`` (and codes a configuration adds).
    public var endpoints: [String]? { storage.context.endpoints }
}

// MARK: - Making errors

extension ConfigurationError {
    private static func make(_ code: Code, _ message: String, _ fill: (inout Context) -> Void = { _ in }) -> ConfigurationError {
        var context = Context()
        fill(&context)
        return ConfigurationError(code, message, context: context)
    }

    /// The credential named `field` is empty or only white space.
    public static func emptyCredential(field: String) -> ConfigurationError {
        make(.emptyCredential, "The \(field) is empty; a credential must not be empty.") { $0.field = field }
    }

    /// The credential named `field` holds a CR, LF or other control character (header injection).
    public static func credentialContainsControlCharacters(field: String) -> ConfigurationError {
        make(.credentialContainsControlCharacters,
             "The \(field) contains a control character (CR, LF or another); it would break the HTTP header and is refused.") { $0.field = field }
    }

    /// A configuration file lacks the required `key`.
    public static func missingKey(_ key: String) -> ConfigurationError {
        make(.missingKey, "The configuration key '\(key)' is required.") { $0.key = key }
    }

    /// The value of `key` is outside its allowed set, for `reason`.
    public static func invalidValue(key: String, reason: String) -> ConfigurationError {
        make(.invalidValue, "The configuration key '\(key)' is invalid: \(reason).") {
            $0.key = key
            $0.reason = reason
        }
    }

    /// The policy sends `scheme` credentials to `endpoints`, but no provider was given for it.
    public static func missingProvider(scheme: String, endpoints: [String]) -> ConfigurationError {
        make(.missingProvider,
             "The policy sends \(scheme) credentials (\(endpoints.joined(separator: ", "))), but no provider is given for the \(scheme) scheme.") {
            $0.scheme = scheme
            $0.endpoints = endpoints
        }
    }

    /// The endpoint `id` was added twice to the policy.
    public static func duplicateEndpoint(_ id: String) -> ConfigurationError {
        make(.duplicateEndpoint, "The endpoint \(id) is already in the policy.") { $0.endpoint = id }
    }

    /// The policy was asked to change the endpoint `id`, which it does not hold.
    public static func unknownEndpoint(_ id: String) -> ConfigurationError {
        make(.unknownEndpoint, "The endpoint \(id) is not in the policy.") { $0.endpoint = id }
    }
}

extension ConfigurationError {
    /// The longest provider name a configuration accepts, in Unicode scalars (256): the lookup
    /// messages repeat a name up to this length, so an accepted name always appears whole.
    public static let maximumProviderNameLength = LogText.typeNameLimit

    /// Refuses a credential that is empty (or blank) or holds a character a header cannot carry,
    /// naming `field` in the error.
    public static func checkCredential(_ credential: String, field: String) throws(ConfigurationError) {
        switch HeaderFieldRules.check(credential) {
        case .valid: return
        case .empty: throw .emptyCredential(field: field)
        case .forbiddenCharacters: throw .credentialContainsControlCharacters(field: field)
        }
    }

    /// `value`, a URL as text (well formed or not), without user info, query or fragment, escaped
    /// and cut: what a message may repeat of a URL that may hold a password or a secret query.
    public static func sanitizedURLText(_ value: String) -> String {
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
