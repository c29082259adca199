import Foundation
import Testing
import SDKAuthorization
import SDKAuthorizationEngagement
import SDKAuthorizationTesting

/// Builds an unsigned JWT with the given payload; the signature segment is a fixed string.
func makeJWT(_ payload: [String: Any], header: [String: Any] = ["alg": "RS256", "typ": "JWT"]) -> String {
    func segment(_ object: [String: Any]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return base64URL(data)
    }
    return "\(segment(header)).\(segment(payload)).c2lnbmF0dXJl"
}

func base64URL(_ data: Data) -> String {
    data.base64EncodedString()
        .replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

func engagementConfiguration(
    authorization: String? = "Token api-key-1",
    advancedAuthEnabled: Bool = false,
    providerLookup: ProviderLookup = .default,
    caching: CustomerTokenCaching = .disabled
) throws -> AuthorizationConfiguration {
    try AuthorizationConfiguration(
        projectToken: "project-1",
        baseURL: "https://api.example.com",
        authorization: authorization,
        advancedAuthEnabled: advancedAuthEnabled,
        providerLookup: providerLookup,
        customerTokenCaching: caching
    )
}

/// A registry whose `ExponeaAuthProvider` is a native scripted provider.
func registry(with provider: any AuthorizationProvider, name: String = ProviderLookup.defaultImplicitName) -> ProviderRegistry {
    let registry = ProviderRegistry()
    registry.register(name: name) { _ in provider }
    return registry
}

// Exponea-shaped provider classes used by the registry and client tests.

final class ExampleAuthProvider: NSObject, AuthorizationProviderType {
    static let token = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1MSJ9.c2ln"
    required override init() {}
    func getAuthorizationToken() -> String? { Self.token }
}

final class NilReturningAuthProvider: NSObject, AuthorizationProviderType {
    required override init() {}
    func getAuthorizationToken() -> String? { nil }
}

final class EmptyReturningAuthProvider: NSObject, AuthorizationProviderType {
    required override init() {}
    func getAuthorizationToken() -> String? { "" }
}

final class InjectingAuthProvider: NSObject, AuthorizationProviderType {
    required override init() {}
    func getAuthorizationToken() -> String? { "abc\r\nX-Injected: yes" }
}

/// Conforms but is not an NSObject subclass (fails the iOS convention, passes the Android one).
final class PlainSwiftAuthProvider: AuthorizationProviderType {
    required init() {}
    func getAuthorizationToken() -> String? { "plain.swift.token" }
}

/// An NSObject subclass that does not conform.
final class NotAnAuthProvider: NSObject {}

/// Checks that every Swift block of the README section headed `heading` stands, line for line
/// (indentation and blank lines aside), in the test source `source`, where top-level functions are
/// `static` members of a namespace. A block's imports (with their `#if canImport` guards) are
/// compared with the source's own when `importsMatch`, so a block that compiles only with an import
/// it does not print fails; otherwise they are ignored (a test file imports more). Returns how many
/// blocks the section has.
func readmeBlocksMatchCompiledCopy(heading: String, source sourcePath: String, importsMatch: Bool = false,
                                   sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
    var root = URL(fileURLWithPath: sourcePath).deletingLastPathComponent()
    while !FileManager.default.fileExists(atPath: root.appendingPathComponent("README.md").path), root.path != "/" {
        root.deleteLastPathComponent()
    }
    let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
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
    let section = try #require(readme.components(separatedBy: heading).dropFirst().first?.components(separatedBy: "\n## ").first, sourceLocation: sourceLocation)
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
