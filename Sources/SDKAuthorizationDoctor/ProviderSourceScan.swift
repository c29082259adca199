import Foundation
import ProviderRegistrationGenerator
import SDKAuthorization
import SDKAuthorizationModeKit

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
    static func requiredProtocol(for mode: ProviderManifest.Mode) -> String {
        mode == .factory ? "NamedProviderFactory" : "AuthorizationProviderType"
    }

    /// The type's own name: its last part, without generic arguments (`App.Outer.Provider<Swift.Int>` is `Provider`).
    static func lastName(_ type: String) -> String {
        String(type.prefix { $0 != "<" }.split(separator: ".").last ?? "")
    }

    /// Warnings for `manifest`, found at `manifestURL`, shown as `manifestPath`.
    package static func check(_ manifest: ProviderManifest, at manifestURL: URL, shownAs manifestPath: String) -> [Finding] {
        let target = manifestURL.deletingLastPathComponent()
        let module = target.lastPathComponent
        let inTarget = manifest.entries.enumerated().filter { $0.element.type.split(separator: ".").first.map(String.init) == module }
        guard !inTarget.isEmpty, let sources = swiftSources(in: target) else { return [] }
        // One pass over the sources for every entry's name, however many entries there are.
        let found = inheritanceClauses(of: Set(inTarget.map { lastName($0.element.type) }), in: sources)
        var findings: [Finding] = []
        for (index, entry) in inTarget {
            let clauses = found[lastName(entry.type)] ?? (0, [])
            let needed = requiredProtocol(for: entry.mode)
            let key = "providers[\(index)].type"
            let file = "\(manifestPath):\(entry.typeLine)"
            if clauses.declarations == 0 {
                findings.append(Finding(.warning, file: file, key: key,
                                        "\(entry.type), declared for \(LogText.typeName(entry.name)), is not declared as a class, struct, enum or actor in the sources of \(module)"))
            } else if !clauses.text.contains(where: { text in
                mentions(needed, in: text) || (entry.mode == .factory && mentions("StandaloneProviderFactory", in: text))
            }) {
                findings.append(Finding(.warning, file: file, key: key,
                                        "\(entry.type), declared for \(LogText.typeName(entry.name)) with mode \(entry.mode.rawValue), does not conform to \(needed) as far as the sources of \(module) show"))
            }
        }
        return findings
    }

    /// Every `.swift` file's bytes under `folder` (hidden folders skipped), or nil past the limit.
    /// Each file is read as the framework reads a configuration file, bounded by what is left of
    /// the limit; a symbolic link, FIFO or unreadable file is passed over.
    static func swiftSources(in folder: URL) -> [Data]? {
        guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles]) else {
            return []
        }
        var sources: [Data] = []
        var total = 0
        for case let url as URL in walker where url.pathExtension == "swift" {
            do {
                let data = try ExternalFile.read(atPath: url.path, limit: maximumSourceBytes - total)
                total += data.count
                sources.append(data)
            } catch .tooLarge {
                return nil
            } catch {
                continue
            }
        }
        return sources
    }

    /// The inheritance clauses (text between the name and `{`) of every declaration of `name`
    /// (`class`, `struct`, `enum` or `actor` followed by the name), and of every extension of it
    /// (`extension Name` or `extension Outer.Name`), and how many declarations there are. A
    /// declaration or extension with no `{` after it is not counted.
    ///
    /// One pass over each source's bytes, each read once: the cost grows with the sources' size
    /// alone, whatever they hold.
    static func inheritanceClauses<Source: Collection<UInt8>>(of name: String, in sources: [Source]) -> (declarations: Int, text: [String]) {
        inheritanceClauses(of: [name], in: sources)[name] ?? (0, [])
    }

    /// ``inheritanceClauses(of:in:)`` for each of `names`, in the same one pass.
    static func inheritanceClauses<Source: Collection<UInt8>>(of names: Set<String>, in sources: [Source]) -> [String: (declarations: Int, text: [String])] {
        let names = Set(names.map { Array($0.utf8) })
        var found: [String: (declarations: Int, text: [String])] = [:]
        for source in sources {
            // Declarations and extensions are looked for apart, so neither hides the other.
            var declared = ClauseScanner(names: names, keywords: ClauseScanner.declarationKeywords)
            var extended = ClauseScanner(names: names, keywords: [ClauseScanner.extensionKeyword])
            for byte in source {
                declared.consume(byte)
                extended.consume(byte)
            }
            declared.finish()
            extended.finish()
            for (name, clause, _) in declared.clauses {
                found[name, default: (0, [])].declarations += 1
                found[name, default: (0, [])].text.append(clause)
            }
            for (name, clause, _) in extended.clauses { found[name, default: (0, [])].text.append(clause) }
        }
        return found
    }

    /// Whether the sources show for certain that the class `name` is not an `NSObject` subclass, as
    /// the iOS convention requires: it is declared once, as a class, and its superclass chain, followed
    /// through classes the sources declare, ends without `NSObject` (no superclass, or a first
    /// inherited name that is `AuthorizationProviderType`, `Sendable` or another protocol the
    /// framework or Swift declares). A superclass the sources do not declare may be an `NSObject`
    /// subclass from elsewhere: not certain, so `false`.
    static func isCertainlyNotNSObject<Source: Collection<UInt8>>(_ name: String, in sources: [Source]) -> Bool {
        var current = name
        var seen: Set<String> = []
        // Each step is one more pass over the sources; a chain deeper than this is left unjudged.
        for _ in 0..<8 {
            guard seen.insert(current).inserted else { return false }
            let declarations = classDeclarations(of: current, in: sources)
            guard declarations.count == 1, let declaration = declarations.first, declaration.keyword == "class" else { return false }
            guard let superclass = firstInheritedName(declaration.clause) else { return true }
            let last = String(superclass.split(separator: ".").last ?? "")
            if last == "NSObject" { return false }
            if knownProtocols.contains(last) { return true }
            current = last
        }
        return false
    }

    /// The names the sources declare as a `class`, `struct`, `enum` or `actor`: the word after the
    /// keyword. One pass over each source's bytes.
    static func declaredTypeNames<Source: Collection<UInt8>>(in sources: [Source]) -> Set<String> {
        let keywords: Set<[UInt8]> = Set(ClauseScanner.declarationKeywords)
        var names: Set<String> = []
        for source in sources {
            var word: [UInt8] = []
            var afterKeyword = false
            for byte in source {
                if ClauseScanner.isIdentifierByte(byte) {
                    word.append(byte)
                    continue
                }
                if !word.isEmpty {
                    if afterKeyword { names.insert(String(decoding: word, as: UTF8.self)) }
                    afterKeyword = keywords.contains(word)
                    word.removeAll(keepingCapacity: true)
                }
                if ![UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r")].contains(byte) { afterKeyword = false }
            }
        }
        return names
    }

    /// Protocols a provider class commonly lists first, which are not classes.
    static let knownProtocols: Set<String> = ["AuthorizationProviderType", "Sendable", "AnyObject", "CustomStringConvertible", "Hashable", "Equatable"]

    /// Every declaration (not extension) of `name`, with its keyword and clause.
    static func classDeclarations<Source: Collection<UInt8>>(of name: String, in sources: [Source]) -> [(keyword: String, clause: String)] {
        var result: [(keyword: String, clause: String)] = []
        for source in sources {
            var scanner = ClauseScanner(names: [Array(name.utf8)], keywords: ClauseScanner.declarationKeywords)
            for byte in source { scanner.consume(byte) }
            scanner.finish()
            result += scanner.clauses.map { ($0.keyword, $0.clause) }
        }
        return result
    }

    /// The first name after the `:` of an inheritance clause (generic parameters and a `where`
    /// clause skipped; `@unchecked` dropped), or nil when there is none.
    static func firstInheritedName(_ clause: String) -> String? {
        var text = Substring(clause).drop { $0.isWhitespace }
        if text.first == "<" {
            var depth = 0
            while let character = text.first {
                text = text.dropFirst()
                if character == "<" { depth += 1 }
                if character == ">" { depth -= 1; if depth == 0 { break } }
            }
            text = text.drop { $0.isWhitespace }
        }
        guard text.first == ":" else { return nil }
        let first = text.dropFirst().prefix { $0 != "," && $0 != "{" }
            .split(whereSeparator: { $0.isWhitespace }).filter { !$0.hasPrefix("@") }.first
        return first.map { String($0.prefix { $0 != "<" }) }.flatMap { $0.isEmpty || $0 == "where" ? nil : $0 }
    }

    /// Whether `word` appears in `text` as a whole name (`SDKAuthorization.NamedProviderFactory` counts).
    static func mentions(_ word: String, in text: String) -> Bool {
        text.utf8.split(whereSeparator: { !ClauseScanner.isIdentifierByte($0) }).contains { $0.elementsEqual(word.utf8) }
    }
}

/// The state of ``ProviderSourceScan/inheritanceClauses(of:in:)`` in one source, fed a byte at a
/// time: words (identifiers) are gathered, and one of `keywords` followed by one of the names (for
/// `extension`, by a path whose last part is the name) opens a clause that the next `{` closes.
private struct ClauseScanner {
    private enum State {
        /// Looking for a keyword.
        case idle
        /// After a keyword: the next word is the name, or for `extension` the first part of a path.
        case afterKeyword
        /// Between the name and `{`: every byte is the clause's.
        case clause
    }

    static let declarationKeywords: [[UInt8]] = ["class", "struct", "enum", "actor"].map { Array($0.utf8) }
    static let extensionKeyword = Array("extension".utf8)

    let names: Set<[UInt8]>
    let keywords: [[UInt8]]
    /// The clauses closed by a `{`, in order, each with the name it follows and the keyword before it.
    private(set) var clauses: [(name: String, clause: String, keyword: String)] = []
    private var state = State.idle
    private var word: [UInt8] = []
    private var keyword: [UInt8] = []
    private var clauseName: [UInt8] = []
    private var clause: [UInt8] = []

    init(names: Set<[UInt8]>, keywords: [[UInt8]]) {
        self.names = names
        self.keywords = keywords
    }

    /// ASCII letters, digits, `_`, and every byte of a non-ASCII character (Swift allows many in names).
    static func isIdentifierByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), 0x80...:
            true
        default:
            false
        }
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
    }

    mutating func consume(_ byte: UInt8) {
        if state == .clause {
            guard byte == UInt8(ascii: "{") else {
                clause.append(byte)
                return
            }
            clauses.append((String(decoding: clauseName, as: UTF8.self), String(decoding: clause, as: UTF8.self), String(decoding: keyword, as: UTF8.self)))
            clause.removeAll(keepingCapacity: true)
            state = .idle
            return
        }
        if Self.isIdentifierByte(byte) {
            word.append(byte)
            return
        }
        if !word.isEmpty {
            endWord(followedBy: byte)
            word.removeAll(keepingCapacity: true)
            if state == .clause { return consume(byte) }
        }
        // Between words: spaces keep the state, and so does the dot of an extension's path;
        // anything else ends what was being read.
        let pathDot = byte == UInt8(ascii: ".") && keywords == [Self.extensionKeyword]
        if state == .afterKeyword, Self.isSpace(byte) || pathDot { return }
        state = .idle
    }

    /// The end of the source: a clause still open has no `{` and is dropped.
    mutating func finish() {
        if !word.isEmpty { endWord(followedBy: nil) }
        word.removeAll()
        clause.removeAll()
        state = .idle
    }

    /// A word has ended, before `next`.
    private mutating func endWord(followedBy next: UInt8?) {
        if state == .afterKeyword {
            if next == UInt8(ascii: "."), keywords == [Self.extensionKeyword] { return }   // a part of the path
            if names.contains(word) {
                clauseName = word
                state = .clause
                return
            }
        }
        if keywords.contains(word) {
            keyword = word
            state = .afterKeyword
        } else {
            state = .idle
        }
    }
}
