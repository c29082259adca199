import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit
import Testing

// Fixtures every test target shares: unsigned JWTs, and the check that a README section's Swift
// blocks are the code a test compiles.

/// Builds an unsigned JWT with the given payload; the signature segment is a fixed string.
public func makeJWT(_ payload: [String: Any], header: [String: Any] = ["alg": "RS256", "typ": "JWT"]) -> String {
    func segment(_ object: [String: Any]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return base64URL(data)
    }
    return "\(segment(header)).\(segment(payload)).c2lnbmF0dXJl"
}

public func base64URL(_ data: Data) -> String {
    data.base64EncodedString()
        .replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

/// Checks that every Swift block of the section headed `heading` in `document` (a Markdown file, by
/// its path from the repository's root: the README, or a DocC article) stands, line for line
/// (indentation and blank lines aside), in the test source `source`, where top-level functions are
/// `static` members of a namespace. The section ends at the next heading of its level or above. A
/// block's imports (with their `#if canImport` guards) are compared with the source's own when
/// `importsMatch`, so a block that compiles only with an import it does not print fails; otherwise
/// they are ignored (a test file imports more). Returns how many blocks the section has.
public func readmeBlocksMatchCompiledCopy(heading: String, in document: String = "README.md", source sourcePath: String, importsMatch: Bool = false,
                                   sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
    var root = URL(fileURLWithPath: sourcePath).deletingLastPathComponent()
    while !FileManager.default.fileExists(atPath: root.appendingPathComponent("README.md").path), root.path != "/" {
        root.deleteLastPathComponent()
    }
    let readme = try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
    let source = try String(contentsOf: URL(fileURLWithPath: sourcePath), encoding: .utf8)
    func isImportLine(_ line: String) -> Bool {
        line.hasPrefix("import ") || line.hasPrefix("#if canImport(") || line == "#endif"
    }
    func lines(_ text: some StringProtocol) -> [String] {
        text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
    /// The import lines a text opens with (comments and blank lines skipped).
    func leadingImports(_ text: some StringProtocol) -> [String] {
        Array(lines(text).filter { !$0.hasPrefix("//") }.prefix(while: isImportLine))
    }
    let level = heading.prefix(while: { $0 == "#" }).count
    let after = try #require(readme.components(separatedBy: heading + "\n").dropFirst().first, "\(document) has no heading \(heading)", sourceLocation: sourceLocation)
    // Up to the next heading of this level or above (`#`s and a space at a line's start; `#if` is not one).
    var sectionLines: [Substring] = []
    for line in after.split(separator: "\n", omittingEmptySubsequences: false) {
        let hashes = line.prefix(while: { $0 == "#" }).count
        if hashes > 0, hashes <= level, line.dropFirst(hashes).hasPrefix(" ") { break }
        sectionLines.append(line)
    }
    let section = sectionLines.joined(separator: "\n")
    let blocks = section.components(separatedBy: "```swift\n").dropFirst().compactMap { $0.components(separatedBy: "```").first }
    let compiled = lines(source).filter { !isImportLine($0) }.joined(separator: "\n")
    for block in blocks {
        let imports = leadingImports(block)
        if importsMatch, !imports.isEmpty {
            #expect(imports == leadingImports(source), "README block's imports differ from the compiled copy's:\n\(block)", sourceLocation: sourceLocation)
        }
        let namespaced = block.split(separator: "\n").map { $0.hasPrefix("func ") ? "static " + $0 : String($0) }.joined(separator: "\n")
        #expect(compiled.contains(lines(namespaced).filter { !isImportLine($0) }.joined(separator: "\n")), "README block differs from the compiled copy:\n\(block)", sourceLocation: sourceLocation)
    }
    return blocks.count
}

/// A store's size limit checked at its edge: a credential whose saved form takes exactly `limit`
/// bytes is saved and read back; one byte more is refused with ``CredentialStoreError/Code/credentialTooLarge``
/// naming its size, and the one saved before is kept. The token's length that fills the limit is
/// found from the size the store reports for a longer one (one byte of an ASCII token is one byte saved).
public func checkCredentialSizeLimitAtItsEdge(save: (StoredCredential) throws -> Void, load: () throws -> StoredCredential?,
                                              limit: Int = 65_536, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let probeLength = limit + 1_000
    var reported: Int?
    do {
        try save(StoredCredential(token: String(repeating: "a", count: probeLength), expiresAt: nil))
    } catch let error as CredentialStoreError {
        reported = error.reason.split(separator: " ").compactMap { Int($0) }.first
    }
    let size = try #require(reported, "a credential of \(probeLength) bytes was refused naming its size", sourceLocation: sourceLocation)
    let fitting = StoredCredential(token: String(repeating: "a", count: probeLength - (size - limit)), expiresAt: nil)
    try save(fitting)
    #expect(try load() == fitting, "exactly \(limit) bytes: saved and read back", sourceLocation: sourceLocation)
    let over = StoredCredential(token: fitting.token + "a", expiresAt: nil)
    #expect(throws: CredentialStoreError.credentialTooLarge(size: limit + 1, limit: limit), sourceLocation: sourceLocation) { try save(over) }
    #expect(try load() == fitting, "the credential saved before is kept", sourceLocation: sourceLocation)
}
