import SDKAuthorization

/// Finds a Swift type by its module-qualified name with the Swift runtime, on every platform:
/// top-level, nested (`MyApp.Outer.Provider`) and generic (`MyApp.Provider<Swift.Int>`) classes,
/// structs and enums. `NSClassFromString` finds only top-level classes on Linux.
///
/// The runtime looks types up by mangled name, and a dotted name does not say whether each part is
/// a class, a struct or an enum, so the combinations are tried, at most ``maximumAttempts`` (81) of them: enough for four nested parts, or a generic type with one argument nested two deep.
/// Names are checked first: ASCII identifiers, 2 to 6 parts, at most 3 generic arguments nested at
/// most 2 deep, at most `ConfigurationError.maximumProviderNameLength` (256) characters.
enum SwiftTypeLookup {
    static let maximumAttempts = 81

    static func type(named name: String) -> Any.Type? {
        guard name.utf8.count <= ConfigurationError.maximumProviderNameLength, let reference = TypeReference(parsing: Substring(name), depth: 0) else { return nil }
        var attempts = 0
        for mangled in reference.mangledCandidates() {
            attempts += 1
            if attempts > maximumAttempts { return nil }
            if let type = _typeByName(mangled) { return type }
        }
        return nil
    }

    /// Whether `name` is a name this lookup can look for (the rules above), without looking
    /// (``ProviderRegistry/isTypeName(_:)``).
    static func isTypeName(_ name: String) -> Bool {
        name.utf8.count <= 256 && TypeReference(parsing: Substring(name), depth: 0) != nil
    }

    /// `Module.Type.Nested<Argument, ...>`.
    private struct TypeReference {
        let parts: [String]
        let arguments: [TypeReference]

        init?(parsing text: Substring, depth: Int) {
            guard depth <= 2 else { return nil }
            var base = text
            var arguments: [TypeReference] = []
            if text.hasSuffix(">") {
                guard let open = text.firstIndex(of: "<") else { return nil }
                base = text[..<open]
                let inner = text[text.index(after: open)..<text.index(before: text.endIndex)]
                var pieces: [Substring] = []
                var level = 0
                var start = inner.startIndex
                for index in inner.indices {
                    switch inner[index] {
                    case "<": level += 1
                    case ">": level -= 1
                    case "," where level == 0:
                        pieces.append(inner[start..<index])
                        start = inner.index(after: index)
                    default: break
                    }
                    if level < 0 { return nil }
                }
                pieces.append(inner[start...])
                guard level == 0, (1...3).contains(pieces.count) else { return nil }
                for piece in pieces {
                    guard let argument = TypeReference(parsing: Substring(piece.trimmingCharacters(in: .whitespaces)), depth: depth + 1) else { return nil }
                    arguments.append(argument)
                }
            }
            let parts = base.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard (2...6).contains(parts.count), parts.allSatisfy(Self.isIdentifier) else { return nil }
            self.parts = parts
            self.arguments = arguments
        }

        static func isIdentifier(_ text: String) -> Bool {
            guard let first = text.utf8.first, text.utf8.count <= 64, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
            return text.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
            }
        }

        /// Every mangling of this reference, one per choice of class (`C`), struct (`V`) or enum (`O`)
        /// for each part and each argument's parts.
        func mangledCandidates() -> [String] {
            let module = parts[0] == "Swift" ? "s" : "\(parts[0].utf8.count)\(parts[0])"
            var bases = [module]
            for part in parts.dropFirst() {
                bases = bases.flatMap { prefix in ["C", "V", "O"].map { prefix + "\(part.utf8.count)\(part)" + $0 } }
                if bases.count > SwiftTypeLookup.maximumAttempts { return Array(bases.prefix(SwiftTypeLookup.maximumAttempts)) }
            }
            guard !arguments.isEmpty else { return bases }
            var argumentLists = [""]
            for argument in arguments {
                let candidates = argument.mangledCandidates()
                argumentLists = argumentLists.flatMap { list in candidates.map { list + $0 } }
                if argumentLists.count > SwiftTypeLookup.maximumAttempts { break }
            }
            var result: [String] = []
            for base in bases {
                for list in argumentLists {
                    result.append(base + "y" + list + "G")
                    if result.count >= SwiftTypeLookup.maximumAttempts { return result }
                }
            }
            return result
        }
    }
}
