import Foundation
import TestSupport
import Testing
import TestSupport

/// Every suite of every package's tests has a time limit, so a test that hangs fails on its own
/// instead of stalling the whole run (`Scripts/test-all`, CI).
@Suite("Test time limits", .hangLimit)
struct TestTimeLimitTests {
    /// The top-level types of one Swift file that hold tests, and whether their attributes set a time limit.
    static func suitesWithoutTimeLimit(in text: String) -> [String] {
        var missing: [String] = []
        var attributes: [String] = []
        var current: (name: String, limited: Bool, hasTests: Bool)?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if let open = current {
                if line.hasPrefix("}") {
                    if open.hasTests, !open.limited { missing.append(open.name) }
                    current = nil
                } else if line.contains("@Test") {
                    current?.hasTests = true
                }
                continue
            }
            if line.hasPrefix("@") {
                attributes.append(String(line))
            } else if let declaration = ["struct ", "final class ", "class ", "enum ", "actor "].first(where: { line.hasPrefix($0) }) {
                let name = line.dropFirst(declaration.count).prefix { $0.isLetter || $0.isNumber || $0 == "_" }
                let limited = attributes.contains { $0.contains(".timeLimit(") || $0.contains(".hangLimit") }
                attributes = []
                // A type declared on one line (`struct Marker {}`) holds no tests.
                if line.filter({ $0 == "{" }).count == line.filter({ $0 == "}" }).count, line.contains("{") { continue }
                current = (String(name), limited, line.contains("@Test"))
            } else if !line.hasPrefix("//"), !line.trimmingCharacters(in: .whitespaces).isEmpty {
                attributes = []
            }
        }
        return missing
    }

    @Test func aTestTypeWithoutATimeLimitIsFound() {
        let text = """
        @Suite("limited", .hangLimit)
        struct Limited {
            @Test func a() {}
        }

        @Suite("unlimited")
        struct Unlimited {
            @Test func b() {}
        }

        struct Helper {
            func c() {}
        }

        struct Marker {}
        @Suite("after a one-line type")
        struct AfterMarker {
            @Test func d() {}
        }
        """
        #expect(Self.suitesWithoutTimeLimit(in: text) == ["Unlimited", "AfterMarker"])
    }

    @Test func aTestThatHangsFailsAtItsLimitInsteadOfStallingTheRun() async throws {
        let test = try #require(Test.current)
        try await withKnownIssue("the hang is cut at its limit and recorded") {
            try await HangLimit(seconds: 1).provideScope(for: test, testCase: Test.Case.current) {
                // Hangs until cancelled: only the limit ends it.
                try await Task.sleep(nanoseconds: 3_600 * 1_000_000_000)
            }
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("did not end within its time limit of 1 s") }
        }
    }

    @Test func everySuiteInEveryPackagesTestsHasATimeLimit() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized
        var checked = 0
        let adapters = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Integrations").path)
            .filter { FileManager.default.fileExists(atPath: root.appendingPathComponent("Integrations/\($0)/Tests").path) }
        #expect(adapters.count >= 5, "every adapter package keeps its tests in Integrations/<Adapter>/Tests: \(adapters)")
        for directory in ["Tests", "Samples/Tests"] + adapters.map({ "Integrations/\($0)/Tests" }) {
            let base = root.appendingPathComponent(directory)
            let files = try #require(FileManager.default.enumerator(atPath: base.path)).compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
            for file in files {
                let text = try String(contentsOf: base.appendingPathComponent(file), encoding: .utf8)
                guard text.contains("@Test") else { continue }
                checked += 1
                #expect(Self.suitesWithoutTimeLimit(in: text).isEmpty, "\(directory)/\(file): a suite without .timeLimit: \(Self.suitesWithoutTimeLimit(in: text))")
            }
        }
        #expect(checked > 50)
    }
}
