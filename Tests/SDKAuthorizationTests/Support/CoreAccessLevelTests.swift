import Foundation
import Testing
import TestSupport

/// The core declares nothing with `package` access (issue 26): whatever a built-in mode needs from
/// it is public API, which a third-party mode uses the same way. What is not public is internal,
/// and the compiler keeps every other target (the modes, the doctor, the testing library) from it.
/// The same holds for the mode kit (`SDKAuthorizationModeKit`), which every mode builds on: its DocC
/// article "Writing a mode of your own" says what may stay `package` and why: nothing today.
@Suite("Core access levels", .hangLimit)
struct CoreAccessLevelTests {
    /// Names the article allows to stay `package` in the core; none. A name here must still not be
    /// used by any other source target.
    static let allowedPackageNames: Set<String> = []

    /// The `package` declarations in one Swift file: its line numbers and declared names
    /// (`init` for an initializer). Comments and string literals are not declarations.
    static func packageDeclarations(in text: String) throws -> [(line: Int, name: String)] {
        let pattern = #"(?:^|[\s)])package(?:\(set\))?\s+(?:(?:static|final|class|override|convenience|required|mutating|nonisolated|lazy|indirect|weak|unowned)\s+)*(?:(?:func|var|let|class|struct|enum|protocol|typealias|actor|case)\s+`?([A-Za-z_][A-Za-z0-9_]*)|(init|subscript|deinit)\b|(extension)\b)"#
        let expression = try NSRegularExpression(pattern: pattern)
        var found: [(line: Int, name: String)] = []
        for (index, line) in text.components(separatedBy: "\n").enumerated() {
            // What precedes a comment or the first string literal on the line.
            var code = line
            if let comment = code.range(of: "//") { code = String(code[..<comment.lowerBound]) }
            if let quote = code.firstIndex(of: "\"") { code = String(code[..<quote]) }
            let range = NSRange(code.startIndex..., in: code)
            guard let match = expression.firstMatch(in: code, range: range) else { continue }
            let name = (1...3).lazy.compactMap { Range(match.range(at: $0), in: code).map { String(code[$0]) } }.first ?? "?"
            found.append((index + 1, name))
        }
        return found
    }

    private static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../../Sources").standardized

    private static func swiftFiles(in directory: URL) -> [URL] {
        let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)
        return (walker?.allObjects as? [URL] ?? []).filter { $0.pathExtension == "swift" }.sorted { $0.path < $1.path }
    }

    @Test func aPackageDeclarationIsFoundAndCommentsAndStringsAreNot() throws {
        let text = """
        package enum Helper {
            package static func check(_ value: String) -> Bool { true }
            public package(set) var count = 0
            package init() {}
            // package func commented() {}
            let text = "package func quoted"
            /// A `package` word in prose.
            func plain() {}
        }
        """
        let found = try Self.packageDeclarations(in: text)
        #expect(found.map(\.line) == [1, 2, 3, 4])
        #expect(found.map(\.name) == ["Helper", "check", "count", "init"])
    }

    @Test(arguments: ["SDKAuthorization", "SDKAuthorizationModeKit"])
    func theCoreAndTheModeKitDeclareNothingWithPackageAccessThatIsNotAllowed(target: String) throws {
        let core = Self.sources.appendingPathComponent(target)
        let files = Self.swiftFiles(in: core)
        try #require(files.count > 10, "the sources are at \(core.path)")
        var declared: [String] = []
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for (line, name) in try Self.packageDeclarations(in: text) where !Self.allowedPackageNames.contains(name) {
                declared.append("\(file.lastPathComponent):\(line) \(name)")
            }
        }
        #expect(declared == [], "make these public (with DocC) or internal: a mode must use only the core's public API")
    }

    /// No `package` member joins a mode and the tools (the doctor, the build-time registration):
    /// what the doctor needs of the registry (registering a described mode by its keys, whether a
    /// name is registered, the "did you mean" hint) and of the Engagement mode (its provider-name
    /// check) is public, so an outside tool can do what the doctor does (issue 37).
    @Test(arguments: ["SDKAuthorizationEngagement", "SDKAuthorizationIDToken", "SDKAuthorizationSignature", "SDKAuthorizationTokenExchange"])
    func noModeDeclaresAnythingWithPackageAccess(target: String) throws {
        let files = Self.swiftFiles(in: Self.sources.appendingPathComponent(target))
        try #require(!files.isEmpty, "the sources are at \(Self.sources.appendingPathComponent(target).path)")
        var declared: [String] = []
        for file in files {
            for (line, name) in try Self.packageDeclarations(in: try String(contentsOf: file, encoding: .utf8)) {
                declared.append("\(file.lastPathComponent):\(line) \(name)")
            }
        }
        #expect(declared == [], "make these public (with DocC) or internal: a tool uses a mode's public API only")
    }

    @Test func noOtherSourceTargetUsesAnAllowedPackageName() throws {
        let targets = try FileManager.default.contentsOfDirectory(atPath: Self.sources.path).filter { $0 != "SDKAuthorization" && $0 != "SDKAuthorizationModeKit" }
        try #require(targets.contains("SDKAuthorizationEngagement"))
        var uses: [String] = []
        for target in targets {
            for file in Self.swiftFiles(in: Self.sources.appendingPathComponent(target)) {
                let text = try String(contentsOf: file, encoding: .utf8)
                for name in Self.allowedPackageNames where text.range(of: #"\b\#(name)\b"#, options: .regularExpression) != nil {
                    uses.append("\(target)/\(file.lastPathComponent) uses \(name)")
                }
            }
        }
        #expect(uses == [])
    }
}
