import Foundation

/// An adapter's example, in the adapter's own DocC article (the first Swift block of
/// `Integrations/<Adapter>/Sources/<Module>/<Module>.docc/<Module>.md`), and the check that a test
/// file compiles the same lines: each adapter's tests hold its example verbatim inside
/// `enum <Name> { ... }`, so the example keeps compiling, and compare. (The README links the
/// articles; it kept these examples until issue 38 moved them.)
public enum READMEExample {
    /// The article, or its Swift block, or the test file's enum, is not where the check looks:
    /// `description` says which.
    public struct Missing: Error, CustomStringConvertible {
        /// What is missing.
        public let description: String
    }

    /// The first Swift block of the Markdown file at `article` (a path from the repository's root,
    /// e.g. `"Integrations/Logging/Sources/SDKAuthorizationLogging/SDKAuthorizationLogging.docc/SDKAuthorizationLogging.md"`),
    /// as its non-empty lines, each trimmed.
    public static func block(article: String) throws -> [String] {
        // This file is Integrations/TestSupport/Sources/READMEExampleSupport/READMEExample.swift.
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<5 { root.deleteLastPathComponent() }
        guard let text = try? String(contentsOf: root.appendingPathComponent(article), encoding: .utf8) else {
            throw Missing(description: "no article at \(article)")
        }
        guard let block = text.components(separatedBy: "```swift\n").dropFirst().first?
            .components(separatedBy: "```").first else { throw Missing(description: "\(article) has no Swift block") }
        return lines(block)
    }

    /// Whether the body of `enum <type> {` in the file at `path` holds `expected` as consecutive
    /// lines (compared trimmed, empty lines skipped).
    public static func isCompiled(_ expected: [String], in type: String, ofFile path: String) throws -> Bool {
        let source = try String(contentsOf: URL(fileURLWithPath: path), encoding: .utf8)
        guard let body = source.components(separatedBy: "enum \(type) {").dropFirst().first?
            .components(separatedBy: "\n}").first else { throw Missing(description: "\(path) has no enum \(type)") }
        let compiled = lines(body)
        return compiled.indices.contains { Array(compiled.dropFirst($0).prefix(expected.count)) == expected }
    }

    static func lines(_ text: some StringProtocol) -> [String] {
        text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
