import Foundation
import Testing
import TestSupport
@testable import SDKAuthorizationModeKit

/// The kit's JSON writer and base64url: what they write reads back, through Foundation's
/// `JSONSerialization` and the kit's own `BoundedJSONReader`, to exactly what was written.
@Suite("JSON writer and base64url", .hangLimit)
struct JSONWriterTests {
    /// `text` as a member name and as its value, written, then read back by both readers.
    static func expectRoundTrip(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let json = JSONWriter.object([(text, .string(text))])
        let data = Data(json.utf8)
        let bounded = try BoundedJSONReader.parse(data)
        #expect(bounded == .object([text: .string(text)]), "\(text.debugDescription) as \(json.debugDescription)", sourceLocation: sourceLocation)
        let foundation = try JSONSerialization.jsonObject(with: data) as? [String: String]
        #expect(foundation == [text: text], "\(text.debugDescription) as \(json.debugDescription)", sourceLocation: sourceLocation)
    }

    @Test func everyCharacterAJSONStringMustEscapeOrMayCarryRoundTrips() throws {
        let controls = String(String.UnicodeScalarView((0..<0x20).compactMap(Unicode.Scalar.init)))
        for text in ["", "\"", "\\", "\\\"", "\"\\u0041\"", "/", controls, "\u{7F}", "\u{85}", "\u{2028}", "\u{2029}",
                     "\u{202E}evil", "\u{FEFF}", "é", "e\u{301}", "日本", "👍🏽", "\u{10FFFF}", "a\u{0}b", "\r\n\t\u{8}\u{C}"] {
            try Self.expectRoundTrip(text)
        }
    }

    @Test func controlCharactersAreEscapedAndEverythingElseWrittenAsItIs() {
        #expect(JSONWriter.string("\"\\/") == #""\"\\/""#)
        #expect(JSONWriter.string("\n\r\t\u{8}\u{C}") == #""\n\r\t\b\f""#)
        #expect(JSONWriter.string("\u{0}\u{1F}") == #""\u0000\u001f""#)
        // A byte-order mark, which Foundation's reader drops after an escape or at a string's start.
        #expect(JSONWriter.string("\u{FEFF}a\u{FEFF}") == #""\ufeffa\ufeff""#)
        // Valid in a JSON string as they are: DEL, C1 controls, the separators, non-ASCII.
        #expect(JSONWriter.string("\u{7F}\u{85}\u{2028}\u{2029}é👍") == "\"\u{7F}\u{85}\u{2028}\u{2029}é👍\"")
    }

    /// Random strings from a seeded generator (the same strings on every run), drawn mostly from
    /// the characters an escaper gets wrong: controls, quotes, backslashes, the separators, and
    /// scalars of every UTF-8 length.
    @Test func randomStringsRoundTripThroughBothReaders() throws {
        var generator = SplitMix64(seed: 0x5DEE_CE66_D1CE_4E5B)
        let tricky: [Unicode.Scalar] = ["\"", "\\", "/", "u", "0", "\u{7F}", "\u{85}", "\u{2028}", "\u{2029}", "\u{FEFF}", "\u{FFFF}", "\u{10FFFF}"]
        for _ in 0..<2_000 {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...24, using: &generator) {
                let scalar: Unicode.Scalar? = switch Int.random(in: 0..<4, using: &generator) {
                case 0: Unicode.Scalar(UInt8.random(in: 0...0x7F, using: &generator))
                case 1: tricky.randomElement(using: &generator)
                case 2: Unicode.Scalar(UInt32.random(in: 0x80...0xFFFF, using: &generator)) // nil for a surrogate
                default: Unicode.Scalar(UInt32.random(in: 0x10000...0x10FFFF, using: &generator))
                }
                if let scalar { scalars.append(scalar) }
            }
            try Self.expectRoundTrip(String(scalars))
        }
    }

    @Test func theReaderKeepsAByteOrderMarkThatStartsAStringAndStillRefusesInvalidUTF8() throws {
        #expect(try BoundedJSONReader.parse(Data("\"\u{FEFF}a\u{FEFF}\"".utf8)) == .string("\u{FEFF}a\u{FEFF}"))
        #expect(try BoundedJSONReader.parse(Data(#""\ufeffa""#.utf8)) == .string("\u{FEFF}a"))
        #expect(try BoundedJSONReader.parse(Data("\"\u{FFFD}\"".utf8)) == .string("\u{FFFD}"), "a replacement character written as one")
        // A stray byte, an overlong NUL, an encoded surrogate, a truncated sequence.
        for bytes: [UInt8] in [[0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0x61, 0xF4, 0x90, 0x80, 0x80]] {
            #expect(throws: BoundedJSONReader.Failure.self, "\(bytes)") { try BoundedJSONReader.parse([0x22] + bytes + [0x22]) }
        }
    }

    @Test func membersAreWrittenInTheOrderGivenAndNestedObjectsSortedByName() throws {
        let json = JSONWriter.object([
            ("z", .number(1_700_000_000)), ("a", .array([.bool(true), .bool(false), .null, .string("x")])),
            ("m", .object(["y": .number(-2), "b": .number(1.5), "k": .object([:])])), ("e", .array([])),
        ])
        #expect(json == #"{"z":1700000000,"a":[true,false,null,"x"],"m":{"b":1.5,"k":{},"y":-2},"e":[]}"#)
        #expect(JSONWriter.object([]) == "{}")
        let read = try BoundedJSONReader.parse(Data(json.utf8))
        #expect(read == .object(["z": .number(1_700_000_000), "a": .array([.bool(true), .bool(false), .null, .string("x")]),
                                 "m": .object(["y": .number(-2), "b": .number(1.5), "k": .object([:])]), "e": .array([])]))
    }

    @Test func numbersReadBackAsTheSameNumberAndThoseJSONCannotHoldAreNull() throws {
        let numbers: [Double] = [0, -0.0, 1, -1, 0.1, 1e15, -1e15, 123_456_789_012_345, 1e300, -1e-300, .leastNonzeroMagnitude, .greatestFiniteMagnitude, .pi]
        for number in numbers {
            let json = JSONWriter.object([("n", .number(number))])
            #expect(try BoundedJSONReader.parse(Data(json.utf8)) == .object(["n": .number(number)]), "\(number) as \(json)")
            let foundation = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Double]
            #expect(foundation == ["n": number], "\(number) as \(json)")
        }
        let json = JSONWriter.object([("nan", .number(.nan)), ("inf", .number(.infinity)), ("-inf", .number(-.infinity))])
        #expect(json == #"{"nan":null,"inf":null,"-inf":null}"#)
        #expect(try BoundedJSONReader.parse(Data(json.utf8)) == .object(["nan": .null, "inf": .null, "-inf": .null]))
    }

    @Test func aNameGivenTwiceIsWrittenTwiceAndTheBoundedReaderRefusesIt() {
        let json = JSONWriter.object([("a", .number(1)), ("a", .number(2))])
        #expect(json == #"{"a":1,"a":2}"#)
        #expect(throws: BoundedJSONReader.Failure.duplicateKey("a")) { try BoundedJSONReader.parse(Data(json.utf8)) }
    }

    @Test func base64URLEncodesTheRFC4648VectorsWithoutPaddingAndWithTheURLAlphabet() {
        let vectors = ["": "", "f": "Zg", "fo": "Zm8", "foo": "Zm9v", "foob": "Zm9vYg", "fooba": "Zm9vYmE", "foobar": "Zm9vYmFy"]
        for (text, encoded) in vectors {
            #expect(Base64URL.encode(Data(text.utf8)) == encoded)
        }
        // Base64 "+/8=" and "/+8=": the two characters base64url replaces.
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
        #expect(Base64URL.encode([0xFF, 0xEF]) == "_-8")
    }

    @Test func everyByteStringRoundTripsThroughTheJWTSegmentDecoder() throws {
        var generator = SplitMix64(seed: 42)
        for length in 0..<70 {
            for _ in 0..<20 {
                let bytes = (0..<length).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
                let encoded = Base64URL.encode(bytes)
                #expect(!encoded.contains(where: { "+/=".contains($0) }))
                #expect(Base64URL.decode(Substring(encoded)) == Data(bytes), "\(bytes)")
            }
        }
        #expect(Base64URL.decode("Zg==") == nil, "padding is refused")
        #expect(Base64URL.decode("Zm9vY") == nil, "4n + 1 characters is no encoding")
    }
}

/// A seeded generator (SplitMix64): the same numbers on every run, so a failure repeats.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
