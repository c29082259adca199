import Foundation
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit

extension JWTDecodingError.Code {
    /// A code a later version could add, as these tests do.
    static let addedInAnExtension = JWTDecodingError.Code(rawValue: "addedInAnExtension")
}

@Suite("JWT decoding errors", .hangLimit)
struct JWTDecodingErrorTests {
    static let secret = "s3cr3t-" + String(repeating: "7f3a", count: 30)  // longer than the 64 characters a message repeats

    /// Every text of `error` a log or a crash report may hold.
    func texts(_ error: JWTDecodingError) -> [String] {
        var dumped = ""
        dump(error, to: &dumped)
        var mirrored = ""
        dump(error as any Error, to: &mirrored)
        return [String(describing: error), String(reflecting: error), error.localizedDescription, (error as any Error).localizedDescription,
                error.message, "\(error)", dumped, mirrored]
    }

    @Test func codesAreStableStrings() {
        let codes: [(JWTDecodingError.Code, String)] = [
            (.wrongSegmentCount, "wrongSegmentCount"), (.invalidBase64, "invalidBase64"), (.notJSON, "notJSON"), (.invalidClaim, "invalidClaim"),
            (.tooLarge, "tooLarge"), (.duplicateClaim, "duplicateClaim"), (.tooDeep, "tooDeep"),
        ]
        for (code, name) in codes {
            #expect(code.rawValue == name)
            #expect("\(code)" == name)
            #expect(JWTDecodingError.Code(rawValue: name) == code)
        }
        #expect(Set(codes.map(\.0)).count == codes.count)
    }

    @Test func anErrorFromAFactoryHasTheCodeTheMessageAndTheContextOfTheOldCase() {
        let segments = JWTDecodingError.wrongSegmentCount(2)
        #expect(segments.code == .wrongSegmentCount && segments.segmentCount == 2)
        #expect(segments.message == "A JWT has 3 segments separated by '.', this one has 2")

        let base64 = JWTDecodingError.invalidBase64(segment: "header")
        #expect(base64.code == .invalidBase64 && base64.segment == "header")
        #expect(base64.message == "The JWT header is not valid base64url")

        let notJSON = JWTDecodingError.notJSON(segment: "payload")
        #expect(notJSON.code == .notJSON && notJSON.segment == "payload")
        #expect(notJSON.message == "The JWT payload is not a JSON object")

        let claim = JWTDecodingError.invalidClaim(name: "exp", expected: "a number of seconds since 1970")
        #expect(claim.code == .invalidClaim && claim.name == "exp" && claim.expected == "a number of seconds since 1970")
        #expect(claim.message == "The JWT claim 'exp' must be a number of seconds since 1970")

        let tooLarge = JWTDecodingError.tooLarge(limit: JWTClaims.maximumTokenLength)
        #expect(tooLarge.code == .tooLarge && tooLarge.limit == 32_768)
        #expect(tooLarge.message == "The JWT is longer than 32768 characters and was not read")

        let duplicate = JWTDecodingError.duplicateClaim(name: "sub")
        #expect(duplicate.code == .duplicateClaim && duplicate.name == "sub")
        #expect(duplicate.message == "The JWT holds the claim 'sub' twice")

        let deep = JWTDecodingError.tooDeep(segment: "payload")
        #expect(deep.code == .tooDeep && deep.segment == "payload")
        #expect(deep.message == "The JWT payload nests JSON deeper than 32 levels")
        #expect(deep.name == nil && deep.limit == nil && deep.segmentCount == nil && deep.expected == nil)
    }

    @Test func localizedDescriptionAndErrorDescriptionAreTheMessage() {
        for error in [JWTDecodingError.wrongSegmentCount(1), .duplicateClaim(name: "sub"), .tooLarge(limit: 10)] {
            #expect(error.errorDescription == error.message)
            #expect((error as any Error).localizedDescription == error.message)
            #expect(String(describing: error) == error.message)
            #expect(String(reflecting: error) == "JWTDecodingError(\(error.code)): \(error.message)")
        }
    }

    @Test func equalityComparesTheCodeAndTheMessage() {
        #expect(JWTDecodingError.notJSON(segment: "payload") == .notJSON(segment: "payload"))
        #expect(JWTDecodingError.notJSON(segment: "payload") != .notJSON(segment: "header"))
        #expect(JWTDecodingError(.addedInAnExtension, JWTDecodingError.wrongSegmentCount(2).message) != .wrongSegmentCount(2))
    }

    @Test func aCodeAddedInAnExtensionWorksWithEqualityAndInASwitch() {
        let error = JWTDecodingError(.addedInAnExtension, "A later version refused this token.")
        #expect(error.code == .addedInAnExtension)
        #expect(error.code != .notJSON)
        #expect(error == JWTDecodingError(.addedInAnExtension, "A later version refused this token."))
        func name(_ code: JWTDecodingError.Code) -> String {
            switch code {
            case .notJSON: "notJSON"
            case .addedInAnExtension: "added"
            default: "other"
            }
        }
        #expect(name(error.code) == "added")
        #expect(name(JWTDecodingError.notJSON(segment: "header").code) == "notJSON")
        #expect(name(JWTDecodingError.tooLarge(limit: 1).code) == "other")
    }

    @Test func noTextOrDumpOfAnErrorFromATokenHoldingASecretHoldsTheSecret() {
        let secret = Self.secret
        let header = base64URL(Data(#"{"alg":"RS256"}"#.utf8))
        var nested = "\"\(secret)\""
        for _ in 0..<40 { nested = "[\(nested)]" }
        let tokens: [(String, JWTDecodingError.Code)] = [
            (makeJWT(["sub": secret]) + ".\(secret)", .wrongSegmentCount),
            ("\(secret)!.e30.sig", .invalidBase64),
            ("\(header).\(base64URL(Data("\(secret) is not JSON".utf8))).sig", .notJSON),
            (makeJWT(["exp": secret]), .invalidClaim),
            ("\(header).\(base64URL(Data(#"{"sub":"\#(secret)","sub":"\#(secret)"}"#.utf8))).\(secret)", .duplicateClaim),
            // The repeated claim's name is the secret: the message cuts it, and the dump shows only the message.
            ("\(header).\(base64URL(Data(#"{"\#(secret)":1,"\#(secret)":2}"#.utf8))).sig", .duplicateClaim),
            ("\(header).\(base64URL(Data(#"{"a":\#(nested)}"#.utf8))).sig", .tooDeep),
            (makeJWT(["sub": secret + String(repeating: "x", count: JWTClaims.maximumTokenLength)]), .tooLarge),
        ]
        for (token, code) in tokens {
            do {
                _ = try JWTClaims(decoding: token)
                Issue.record("accepted a token expected to fail with \(code)")
            } catch {
                #expect(error.code == code, "\(error)")
                for text in texts(error) { #expect(!text.contains(secret), "\(code): \(text)") }
            }
        }
    }

    @Test func aTokenOfExactlyTheLengthLimitIsDecodedAndOneByteMoreIsRefusedAsTooLarge() throws {
        let start = makeJWT(["sub": "user-7"])
        // The signature segment is not decoded: padding it reaches any length.
        let atTheLimit = start + String(repeating: "a", count: JWTClaims.maximumTokenLength - start.utf8.count)
        #expect(atTheLimit.utf8.count == 32_768)
        #expect(try JWTClaims(decoding: atTheLimit).subject == "user-7")
        #expect(throws: JWTDecodingError.tooLarge(limit: 32_768)) { try JWTClaims(decoding: atTheLimit + "a") }
    }
}
