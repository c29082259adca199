import Foundation
import Testing
import TestSupport

/// The core's own tests prove what holds for any mode built on the core, so they import none: a
/// test that needs a mode lives in that mode's test target (or in SDKAuthorizationModesTests when it
/// needs several). SwiftPM can let a file import a module its target does not declare when the
/// module was built anyway, so the rule is checked on the sources, not left to the compiler.
@Suite("The core's test target", .hangLimit)
struct CoreTestsImportNoModeTests {
    static let modes = ["SDKAuthorizationEngagement", "SDKAuthorizationIDToken", "SDKAuthorizationSignature", "SDKAuthorizationTokenExchange"]

    @Test func noFileOfTheCoresTestsOrOfItsSupportImportsAMode() throws {
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let support = tests.deletingLastPathComponent().appendingPathComponent("TestSupport")
        var offenders: [String] = []
        var checked = 0
        for directory in [tests, support] {
            let files = try #require(FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil))
            for case let file as URL in files where file.pathExtension == "swift" {
                checked += 1
                let text = try String(contentsOf: file, encoding: .utf8)
                for line in text.split(separator: "\n") {
                    let words = line.split(separator: " ")
                    guard let index = words.firstIndex(of: "import"), index + 1 < words.count else { continue }
                    if Self.modes.contains(String(words[index + 1])) { offenders.append("\(file.lastPathComponent): \(line)") }
                }
            }
        }
        #expect(checked > 15, "the core's tests were found")
        #expect(offenders.isEmpty, "the core's tests import a mode:\n\(offenders.joined(separator: "\n"))")
    }
}
