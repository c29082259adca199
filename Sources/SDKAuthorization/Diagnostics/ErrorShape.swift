import Foundation
internal import SDKAuthorizationPrimitives

/// The shape every error of the framework and its modes shares: a ``Code`` a caller matches on,
/// a message that never holds a credential, and the texts, mirror and equality that follow from
/// them, written once.
///
/// An error of your own gets the whole shape by declaring its codes, its message and the context
/// that applies to it, as ``RequestError``, ``ConfigurationError`` and the modes' errors do:
///
/// ```swift
/// /// Why the chat SDK refused a message.
/// public struct ChatError: ErrorShape.Coded {
///     public struct Code: ErrorShape.Code {
///         public let rawValue: String
///         public init(rawValue: String) { self.rawValue = rawValue }
///
///         /// The message is longer than the server accepts.
///         public static let messageTooLong = Code(rawValue: "messageTooLong")
///     }
///
///     public let code: Code
///     /// A sentence that says what happened; never a credential.
///     public let message: String
/// }
///
/// let error = ChatError(code: .messageTooLong, message: "The message is longer than 4096 characters")
/// print(error)          // The message is longer than 4096 characters
/// debugPrint(error)     // ChatError(messageTooLong): The message is longer than 4096 characters
/// ```
///
/// The two protocols live in one namespace because Swift cannot nest a type or a protocol in a
/// protocol: each error keeps a code type of its own, so two errors may both have a code named
/// `unknownEndpoint` (``RequestError/Code/unknownEndpoint`` and
/// ``ConfigurationError/Code/unknownEndpoint`` do), and code of any module adds codes to one
/// error's `Code` in an extension without reaching another's.
public enum ErrorShape {
    /// A stable, extensible name for what went wrong: a struct rather than an enum, so a later
    /// version or another module adds codes (`static let` in an extension) without breaking any
    /// caller's exhaustive `switch`. It prints its `rawValue`.
    ///
    /// A conforming type declares its storage and initializer only (`public let rawValue: String`
    /// and `public init(rawValue: String)`); equality, hashing and `description` follow.
    public protocol Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible where RawValue == String {
        /// Creates a code.
        init(rawValue: String)
    }

    /// An error with a ``ErrorShape/Code`` and a message.
    ///
    /// A conforming type declares ``code`` and ``message``; the default `description`,
    /// `errorDescription`, `debugDescription`, `customMirror` and `==` show and compare those two
    /// only (other context is not compared: the message repeats what a developer needs of it), so an
    /// error whose message never holds a credential never shows one in any text or `dump`. A type
    /// that shows or compares more (``RequestError`` shows its response and compares its status)
    /// implements those members itself.
    public protocol Coded: Error, LocalizedError, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
        /// The error's code type, with the error's codes as static members.
        associatedtype Code: ErrorShape.Code
        /// What went wrong.
        var code: Code { get }
        /// A sentence that says what happened: shown and logged as it is, so never a credential,
        /// and text from outside escaped with `LogText` (mode kit).
        var message: String { get }
    }
}

extension ErrorShape.Code {
    /// The code's name: its `rawValue`.
    public var description: String { rawValue }
}

extension ErrorShape.Coded {
    /// Whether the two errors have the same code and message.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message
    }

    /// The message.
    public var description: String { message }

    /// The message, for code that shows `localizedDescription`.
    public var errorDescription: String? { message }

    /// The type's name, the code and the message: `ConfigurationError(missingKey): The configuration key 'projectToken' is required.`
    public var debugDescription: String { "\(Self.self)(\(code)): \(message)" }

    /// The code and the message: what `dump` shows.
    public var customMirror: Mirror {
        Mirror(self, children: ["code": code.rawValue, "message": message], displayStyle: .struct)
    }
}
