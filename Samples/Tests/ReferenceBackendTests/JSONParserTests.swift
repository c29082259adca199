import Foundation
@testable import ReferenceBackend
import Testing

/// The backend's JSON reader: one linear pass with a depth limit. Work is measured by counting the
/// parser's byte reads, never by the clock.
@Suite("JSONParser reads untrusted JSON in linear work", .timeLimit(.minutes(3)))
struct JSONParserTests {
    /// Parses `text` and returns the outcome and the number of byte reads.
    private func parse(_ text: String, maximumDepth: Int = JSONParser.defaultMaximumDepth) -> (Result<JSONValue, JSONParser.Failure>, reads: Int) {
        var parser = JSONParser(Data(text.utf8), maximumDepth: maximumDepth)
        let result = Result { () throws(JSONParser.Failure) in try parser.parseDocument() }
        return (result, parser.reads)
    }

    /// The most times the parser reads one byte (a `[` is peeked for whitespace, for its type,
    /// consumed, then the next byte is peeked for whitespace and for `]`).
    private let readsPerByte = 6

    private func nested(_ depth: Int) -> String {
        String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    }

    @Test("5,000 nested arrays are refused as too deep after reading only as deep as the limit")
    func nestingBeyondTheLimitIsRefusedAfterBoundedWork() throws {
        let limit = JSONParser.defaultMaximumDepth
        let (shallow, shallowReads) = parse(nested(limit))
        #expect((try? shallow.get()) != nil)

        let (deep, deepReads) = parse(nested(5_000))
        guard case .failure(.tooDeep) = deep else {
            Issue.record("expected tooDeep, got \(deep)")
            return
        }
        // The refusal costs a few reads per level up to the limit, whatever the depth:
        // 5,000 and 50,000 levels cost the same.
        #expect(deepReads <= readsPerByte * (limit + 1))
        #expect(parse(nested(50_000)).reads == deepReads)
        #expect(shallowReads <= readsPerByte * nested(limit).utf8.count)
    }

    @Test(
        "Reading work is linear in the input: four times the input costs four times the reads",
        arguments: ["nested to the limit", "wide array", "object", "escaped strings", "numbers"]
    )
    func parsingWorkGrowsLinearlyWithTheInput(shape: String) throws {
        func document(_ count: Int) -> String {
            let item: String =
                switch shape {
                case "nested to the limit": nested(JSONParser.defaultMaximumDepth - 1)
                case "wide array": #"[true,false,null,"x"]"#
                case "object": #"{"a":{"b":[1,2,{"c":"d"}]}}"#
                case "escaped strings": #""\u00e9\ud83d\ude00\n\"\\ \/""#
                default: "-12.5e+3"
                }
            return "[" + Array(repeating: item, count: count).joined(separator: ",") + "]"
        }
        var reads: [Int] = []
        for count in [100, 400] {
            let text = document(count)
            let (result, work) = parse(text)
            #expect((try? result.get()) != nil, "\(shape) did not parse")
            // Each byte is read a bounded number of times.
            #expect(work <= readsPerByte * text.utf8.count, "\(shape): \(work) reads for \(text.utf8.count) bytes")
            reads.append(work)
        }
        let ratio = Double(reads[1]) / Double(reads[0])
        #expect(ratio > 3.5 && ratio < 4.5, "\(shape): work ratio \(ratio) for 4x the input")
    }

    @Test("Values are read exactly: numbers, escapes, surrogate pairs, nesting")
    func valuesAreReadExactly() throws {
        let text = #" {"s":"a\"b\\c\/d\u00e9\ud83d\ude00\n","n":[0,-1,2.5,1e3,-0.25E-2],"b":[true,false,null],"o":{"":{}}} "#
        let value = try parse(text).0.get()
        #expect(value == .object([
            "s": .string("a\"b\\c/dé😀\n"),
            "n": .array([.number(0), .number(-1), .number(2.5), .number(1000), .number(-0.0025)]),
            "b": .array([.bool(true), .bool(false), .null]),
            "o": .object(["": .object([:])]),
        ]))
        #expect(JSONValue.object(from: Data(#"{"customer_ids":{"registered":"u1"}}"#.utf8))?["customer_ids"]?.objectValue?["registered"] == .string("u1"))
    }

    @Test(
        "Invalid JSON, repeated keys and non-finite numbers are refused",
        arguments: [
            "", " ", "{", "[1,]", #"{"a":1,}"#, "01", "1.", "-", "1e", "+1", ".5", "NaN", "Infinity", "1e400", "-1e400",
            #""\ud800""#, #""\udc00x""#, "\"a\nb\"", #""\x""#, #""\u12G4""#, "nul", "tru", "[1] x", "[1]]", #"{"a" 1}"#,
            #"{a:1}"#, #"{"a":1,"a":2}"#, "'a'", "[1 2]", "\u{FEFF}{}",
        ]
    )
    func invalidJSONIsRefused(_ text: String) {
        if case .success(let value) = parse(text).0 {
            Issue.record("accepted \(text.debugDescription) as \(value)")
        }
    }

    @Test("Invalid UTF-8 inside a string is refused")
    func invalidUTF8IsRefused() {
        var parser = JSONParser([UInt8(ascii: "\""), 0xC3, 0x28, UInt8(ascii: "\"")])
        #expect(throws: JSONParser.Failure.self) { try parser.parseDocument() }
    }

    @Test("An expired token's exp is shown without converting it to Int, even at 1e300")
    func secondsAreFormattedWithoutTrapping() {
        #expect(KeyRing.seconds(1_700_000_000) == "1700000000")
        #expect(KeyRing.seconds(1_700_000_000.9) == "1700000000")
        #expect(KeyRing.seconds(-1e300) == String(-1e300))
        #expect(KeyRing.seconds(1e300) == String(1e300))
    }
}
