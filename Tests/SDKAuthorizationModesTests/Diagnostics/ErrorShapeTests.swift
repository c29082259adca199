import Foundation
import Testing
import TestSupport
import SDKAuthorization
import SDKAuthorizationModeKit
import SDKAuthorizationSignature

// The same code name added to every product's error, as outside code adds codes: each error's
// `Code` is a type of its own, so the five declarations do not collide.
extension RequestError.Code { static let shapeProbe = RequestError.Code(rawValue: "shapeProbe") }
extension ConfigurationError.Code { static let shapeProbe = ConfigurationError.Code(rawValue: "shapeProbe") }
extension CredentialStoreError.Code { static let shapeProbe = CredentialStoreError.Code(rawValue: "shapeProbe") }
extension JWTDecodingError.Code { static let shapeProbe = JWTDecodingError.Code(rawValue: "shapeProbe") }
extension SignatureQueueError.Code { static let shapeProbe = SignatureQueueError.Code(rawValue: "shapeProbe") }

/// An error a new product would declare: its codes, its message and a field the shape must never
/// show or compare.
struct NewProductError: ErrorShape.Coded {
    struct Code: ErrorShape.Code {
        let rawValue: String
        init(rawValue: String) { self.rawValue = rawValue }

        static let shapeProbe = Code(rawValue: "shapeProbe")
        static let other = Code(rawValue: "other")
    }

    let code: Code
    let message: String
    /// Context a message never repeats (a credential, here): the shape's texts and mirror leave it out.
    let credential: String
}

@Suite("One error shape for every product", .hangLimit)
struct ErrorShapeTests {
    static let secret = "sk-live-" + String(repeating: "9c1e", count: 12)

    /// Everything `ErrorShape.Coded` gives `E` from its code and message alone, checked on an error
    /// made with `code` and `message`, `make` being how the product makes one.
    func expectSharedShape<E: ErrorShape.Coded>(_ make: (E.Code, String) -> E, code: E.Code, other: E.Code, message: String,
                                                 debugDescription: String? = nil, comparesMessage: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) {
        let error = make(code, message)
        // The code prints its raw value.
        #expect("\(code)" == code.rawValue, sourceLocation: sourceLocation)
        #expect(code.description == "shapeProbe", sourceLocation: sourceLocation)
        #expect(E.Code(rawValue: "shapeProbe") == code, sourceLocation: sourceLocation)
        // Every text is the message; the debug text adds the type's name and the code.
        #expect(error.description == message, sourceLocation: sourceLocation)
        #expect("\(error)" == message, sourceLocation: sourceLocation)
        #expect(error.errorDescription == message, sourceLocation: sourceLocation)
        #expect((error as any Error).localizedDescription == message, sourceLocation: sourceLocation)
        #expect(String(reflecting: error) == (debugDescription ?? "\(E.self)(shapeProbe): \(message)"), sourceLocation: sourceLocation)
        // Equal when the code and the message are; a different code or message is another error.
        #expect(make(code, message) == error, sourceLocation: sourceLocation)
        #expect(make(other, message) != error, sourceLocation: sourceLocation)
        if comparesMessage { #expect(make(code, message + ".") != error, sourceLocation: sourceLocation) }
    }

    /// The children `dump` shows of `error`.
    func mirrored(_ error: some ErrorShape.Coded) -> [String] {
        Mirror(reflecting: error).children.map { "\($0.label ?? "?")=\($0.value)" }
    }

    @Test func everyProductsErrorGetsItsTextsAndEqualityFromTheOneShape() {
        expectSharedShape({ ConfigurationError($0, $1) }, code: .shapeProbe, other: .missingKey, message: "The configuration key 'x' is odd.")
        expectSharedShape({ CredentialStoreError($0, reason: String($1.dropFirst("Credential store: ".count))) }, code: .shapeProbe,
                          other: .unsafeFile, message: "Credential store: the slot is odd")
        expectSharedShape({ JWTDecodingError($0, $1) }, code: .shapeProbe, other: .notJSON, message: "The JWT is odd")
        expectSharedShape({ SignatureQueueError($0, $1) }, code: .shapeProbe, other: .full, message: "The request queue is odd")
        expectSharedShape({ NewProductError(code: $0, message: $1, credential: Self.secret) }, code: .shapeProbe, other: .other,
                          message: "The chat message is odd")
        // RequestError adds its response and whether it was sent to its debug text, and compares its
        // endpoint, status, scheme and body instead of its message; its other texts are the shape's.
        expectSharedShape({ RequestError($0, $1) }, code: .shapeProbe, other: .httpError, message: "The request is odd",
                          debugDescription: "RequestError(shapeProbe): The request is odd", comparesMessage: false)
        #expect(RequestError(.shapeProbe, "The request is odd").message == "The request is odd")
    }

    @Test func theMirrorShowsTheCodeAndTheMessageOnly() {
        #expect(mirrored(ConfigurationError(.shapeProbe, "odd", key: Self.secret, value: Self.secret)) == ["code=shapeProbe", "message=odd"])
        #expect(mirrored(CredentialStoreError(.shapeProbe, reason: "odd")) == ["code=shapeProbe", "message=Credential store: odd"])
        #expect(mirrored(JWTDecodingError(.shapeProbe, "odd")) == ["code=shapeProbe", "message=odd"])
        #expect(mirrored(SignatureQueueError(.shapeProbe, "odd")) == ["code=shapeProbe", "message=odd"])
        #expect(mirrored(NewProductError(code: .shapeProbe, message: "odd", credential: Self.secret)) == ["code=shapeProbe", "message=odd"])
    }

    @Test func aNewProductsErrorNeverShowsOrComparesTheContextItsMessageLeavesOut() {
        let error = NewProductError(code: .shapeProbe, message: "The chat message is odd", credential: Self.secret)
        var dumped = ""
        dump(error, to: &dumped)
        var dumpedAsError = ""
        dump(error as any Error, to: &dumpedAsError)
        for text in [error.description, String(reflecting: error), error.localizedDescription, "\(error)", dumped, dumpedAsError] {
            #expect(!text.contains(Self.secret), "\(text)")
        }
        // Equality is the shape's (code and message), not one synthesized over every stored field.
        #expect(error == NewProductError(code: .shapeProbe, message: "The chat message is odd", credential: "another"))
    }

    @Test func theSignatureQueuesUndeliverableReasonIsACodeThatPrintsItsRawValue() {
        let reasons: [SignatureRequestQueue.Undeliverable.Reason] = [.refused, .tooManyAttempts, .tooOld]
        #expect(reasons.map { "\($0)" } == ["refused", "tooManyAttempts", "tooOld"])
        #expect(SignatureRequestQueue.Undeliverable.Reason(rawValue: "tooOld") == .tooOld)
    }

    @Test func twoErrorsKeepTheirCodesApartWhereTheirNamesAreTheSame() {
        // Both core errors have a code named unknownEndpoint; each is a value of its own error's Code.
        #expect(RequestError.Code.unknownEndpoint.rawValue == "unknownEndpoint")
        #expect(ConfigurationError.Code.unknownEndpoint.rawValue == "unknownEndpoint")
        #expect(RequestError.unknownEndpoint("inbox").code == .unknownEndpoint)
        #expect(ConfigurationError.unknownEndpoint("inbox").code == .unknownEndpoint)
        #expect(ObjectIdentifier(RequestError.Code.self) != ObjectIdentifier(ConfigurationError.Code.self))
    }
}
