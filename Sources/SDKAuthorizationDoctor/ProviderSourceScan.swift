import Foundation
import SDKAuthorization

/// Looks through a target's Swift sources for the types its ``ProviderManifest`` declares: a source
/// scan, not a compiler, so what it finds are warnings. The build that registers the types checks
/// them for certain.
///
/// An entry is looked at when its type's module is the target holding the manifest (the folder's
/// name): the type's last name must be declared (`class`, `struct`, `enum` or `actor`), and its
/// declaration or an extension of it must name the protocol its mode needs:
/// `AuthorizationProviderType` for `customerToken`, `NamedProviderFactory` for `factory`.
package enum ProviderSourceScan {
    /// The most read of one target's sources, in bytes; past it the scan stops and says nothing.
    static let maximumSourceBytes = 8 << 20

    /// The protocol an entry's mode needs.
    static func requiredProtocol(for mode: String) -> String {
        mode == "factory" ? "NamedProviderFactory" : "AuthorizationProviderType"
    }

    /// Warnings for `manifest`, found at `manifestURL`, shown as `manifestPath`.
    package static func check(_ manifest: ProviderManifest, at manifestURL: URL, shownAs manifestPath: String) -> [Finding] {
        let target = manifestURL.deletingLastPathComponent()
        let module = target.lastPathComponent
        let inTarget = manifest.providers.enumerated().filter { $0.element.type.split(separator: ".").first.map(String.init) == module }
        guard !inTarget.isEmpty, let sources = swiftSources(in: target) else { return [] }
        var findings: [Finding] = []
        for (index, entry) in inTarget {
            let name = String(entry.type.split(separator: ".").last ?? "")
            let clauses = inheritanceClauses(of: name, in: sources)
            let needed = requiredProtocol(for: entry.mode)
            let key = "providers[\(index)].type"
            if clauses.declarations == 0 {
                findings.append(Finding(.warning, file: manifestPath, key: key,
                                        "\(entry.type), declared for \(LogText.typeName(entry.name)), is not declared as a class, struct, enum or actor in the sources of \(module)"))
            } else if !clauses.text.contains(where: { mentions(needed, in: $0) }) {
                findings.append(Finding(.warning, file: manifestPath, key: key,
                                        "\(entry.type), declared for \(LogText.typeName(entry.name)) with mode \(entry.mode), does not conform to \(needed) as far as the sources of \(module) show"))
            }
        }
        return findings
    }

    /// Every `.swift` file's text under `folder` (hidden folders skipped), or nil past the limit.
    static func swiftSources(in folder: URL) -> [String]? {
        guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles]) else {
            return []
        }
        var texts: [String] = []
        var total = 0
        for case let url as URL in walker where url.pathExtension == "swift" {
            guard let data = try? Data(contentsOf: url) else { continue }
            total += data.count
            guard total <= maximumSourceBytes else { return nil }
            texts.append(String(decoding: data, as: UTF8.self))
        }
        return texts
    }

    /// The inheritance clauses (text between the name and `{`) of every declaration of `name`,
    /// and of every extension of it, and how many declarations there are.
    static func inheritanceClauses(of name: String, in sources: [String]) -> (declarations: Int, text: [String]) {
        let escaped = NSRegularExpression.escapedPattern(for: name)
        guard let declaration = try? NSRegularExpression(pattern: #"\b(?:class|struct|enum|actor)\s+"# + escaped + #"\b([^{]*)\{"#),
              let extensionOf = try? NSRegularExpression(pattern: #"\bextension\s+(?:[A-Za-z_][A-Za-z0-9_]*\.)*"# + escaped + #"\b([^{]*)\{"#)
        else { return (0, []) }
        var declarations = 0
        var clauses: [String] = []
        for source in sources {
            let whole = NSRange(source.startIndex..., in: source)
            for match in declaration.matches(in: source, range: whole) {
                declarations += 1
                if let range = Range(match.range(at: 1), in: source) { clauses.append(String(source[range])) }
            }
            for match in extensionOf.matches(in: source, range: whole) {
                if let range = Range(match.range(at: 1), in: source) { clauses.append(String(source[range])) }
            }
        }
        return (declarations, clauses)
    }

    /// Whether `word` appears in `text` as a whole name (`SDKAuthorization.NamedProviderFactory` counts).
    static func mentions(_ word: String, in text: String) -> Bool {
        text.range(of: #"(?<![A-Za-z0-9_])"# + word + #"(?![A-Za-z0-9_])"#, options: .regularExpression) != nil
    }
}
