import Foundation

extension Credential {
    /// The one rule for identities (the user a credential belongs to), shared by the stores and the
    /// providers that name one: 1 to 100 UTF-8 bytes, compared as exact bytes (the credential stores' rule).
    public enum Identity {
        /// How long an identity may be, in UTF-8 bytes.
        public static let lengths = 1...100

        /// Whether `identity` has an acceptable length.
        public static func isValid(_ identity: String) -> Bool { lengths.contains(identity.utf8.count) }

        /// Checks the user an identity change names (``AuthorizedHTTPClient/identityDidChange(to:)``):
        /// an identity every provider can key by, 1 to 100 UTF-8 bytes with no control character.
        ///
        /// - Throws: ``ConfigurationError/invalidValue(key:reason:)`` naming `key` otherwise.
        static func checkUser(_ identity: String, key: String) throws(ConfigurationError) {
            try check(identity, hasStore: false, key: key)
            guard !identity.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == "\u{2028}" || $0 == "\u{2029}" }) else {
                throw .invalidValue(key: key, reason: "must not contain control characters")
            }
        }

        /// Checks `identity`, the user a provider's credential belongs to (`nil` for none), and that a
        /// provider that keeps its credential in a credential store (`hasStore`) is given one; errors
        /// name `key`, the setting.
        ///
        /// - Throws: ``ConfigurationError/invalidValue(key:reason:)`` when `identity` has a length
        ///   outside ``lengths``, or is `nil` while `hasStore` is true.
        public static func check(_ identity: String?, hasStore: Bool, key: String) throws(ConfigurationError) {
            if let identity {
                guard isValid(identity) else { throw .invalidValue(key: key, reason: "must be 1 to 100 UTF-8 bytes") }
            } else if hasStore {
                throw .invalidValue(key: key, reason: "a credential store keeps one user's token: name the user (their ID) it belongs to; there is no shared default")
            }
        }
    }
}

