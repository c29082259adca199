import Foundation
import SDKAuthorization

/// The configuration keys of the modes registered with the registry that reads a file: how the
/// reader accepts exactly those keys (besides the Engagement keys), under their names and their
/// vendors' spellings, top-level or in a vendor's dictionary.
struct ModeKeys {
    /// One way a file may spell one mode's key.
    struct Spelling {
        let providerName: String
        let key: ModeSettingKey
        /// `["EnableSDKAuthentication"]`, or `["Braze", "EnableSDKAuthentication"]`.
        let path: [String]
        let vendor: String?
        let choosesMode: Bool

        var dotted: String { path.joined(separator: ".") }
    }

    let spellings: [Spelling]

    init(_ keys: [(providerName: String, key: ModeSettingKey)]) {
        spellings = keys.flatMap { entry in
            [Spelling(providerName: entry.providerName, key: entry.key, path: [entry.key.name], vendor: nil, choosesMode: false)]
                + entry.key.vendorSpellings.filter { (1...2).contains($0.path.count) }.map {
                    Spelling(providerName: entry.providerName, key: entry.key, path: $0.path, vendor: $0.vendor, choosesMode: $0.choosesMode)
                }
        }
    }

    /// The top-level names that are a vendor's dictionary of mode keys (`Braze`).
    var dictionaryNames: Set<String> { Set(spellings.filter { $0.path.count == 2 }.map { $0.path[0] }) }

    /// Refuses every key that is neither an Engagement key nor a registered mode's, naming the
    /// file, the key, and the key it may mean or the mode to register.
    func refuseUnknownKeys(in values: [String: JWTClaimValue], fileName: String?) throws(ConfigurationError) {
        let topLevel = AuthorizationConfiguration.fileKeys.union(spellings.filter { $0.path.count == 1 }.map(\.path[0])).union(dictionaryNames)
        var unknown: [String] = []
        for key in values.keys where !topLevel.contains(key) { unknown.append(key) }
        for name in dictionaryNames.sorted() {
            guard let value = values[name] else { continue }
            guard case .object(let members) = value else { throw .wrongType(key: name, expected: "a dictionary") }
            let known = Set(spellings.filter { $0.path.count == 2 && $0.path[0] == name }.map(\.path[1]))
            for member in members.keys where !known.contains(member) { unknown.append("\(name).\(member)") }
        }
        guard !unknown.isEmpty else { return }
        unknown.sort()
        let candidates = topLevel.union(spellings.filter { $0.path.count == 2 }.map(\.dotted))
        let hints = unknown.map { key in hint(forUnknown: key, candidates: candidates) }
        let place = fileName.map { "in \(LogText.escaped($0, limit: 128))" }
        let said = ([place].compactMap { $0 } + hints.compactMap { $0 }).joined(separator: "; ")
        throw said.isEmpty ? ConfigurationError.unknownKeys(unknown) : ConfigurationError.unknownKeys(unknown).appendingHint(said)
    }

    /// "did you mean", or which built-in mode to register, for an unknown key.
    private func hint(forUnknown key: String, candidates: Set<String>) -> String? {
        let shown = LogText.escaped(key, limit: 64)
        let head = String(key.prefix { $0 != "." })
        if let mode = BuiltInProviderName.owner(ofKey: head), let registration = BuiltInProviderName.registration(for: mode),
           let product = BuiltInProviderName.product(for: mode), !spellings.contains(where: { $0.providerName == mode }) {
            return "\(shown) is a key of the mode \(mode), which is not registered: register \(registration) (product \(product)) with the registry that reads the file"
        }
        let lowered = key.lowercased()
        var best: (name: String, distance: Int)?
        for candidate in candidates.sorted() {
            let distance = candidate.lowercased() == lowered
                ? 0 : BuiltInProviderName.editDistance(Array(lowered.unicodeScalars), Array(candidate.lowercased().unicodeScalars), limit: 2)
            guard let distance else { continue }
            if best == nil || distance < best!.distance { best = (candidate, distance) }
        }
        return best.map { "\(shown): did you mean '\($0.name)'?" }
    }

    /// What a file says to the registered modes.
    struct Read {
        /// Each given key's value, by mode, with the spelling the file used.
        var given: [String: [(key: ModeSettingKey, spelled: String, value: ModeSettings.Value)]] = [:]
        /// The mode a vendor's switch turned on, and the switch as spelt.
        var chosen: (mode: String, spelling: String)?
        /// The vendor switches present but not on: (mode, switch, absent or false).
        var switchesOff: [(mode: String, spelling: String, present: Bool)] = []

        /// The settings of the mode `providerName` chooses, checked against its keys; a key of
        /// another mode is refused, naming the key as written.
        func settings(forProviderName providerName: String?, keys: ModeKeys) throws(ConfigurationError) -> ModeSettings {
            for mode in given.keys.sorted() where mode != providerName {
                // A vendor's switch left off is the vendor's way of saying "mode off".
                for entry in given[mode]! where !isSwitchOff(entry.spelled) {
                    throw .invalidValue(key: entry.spelled, reason: "it applies only to the mode \(mode); set providerName to \(mode) or remove it")
                }
            }
            guard let providerName, let modeKeys = keys.keys(of: providerName) else { return ModeSettings() }
            var values: [String: ModeSettings.Value] = [:]
            for entry in given[providerName] ?? [] { values[entry.key.name] = entry.value }
            return try ModeSettings(values).checked(for: modeKeys, providerName: providerName)
        }

        private func isSwitchOff(_ spelled: String) -> Bool {
            switchesOff.contains { $0.spelling == spelled }
        }

        /// The notes for the vendor switches that leave their mode off, unless `providerName` chose it.
        func offNotes(providerName: String?) -> [String] {
            switchesOff.filter { $0.mode != providerName }.map { entry in
                entry.present
                    ? "the mode \(entry.mode) is off: \(entry.spelling) is false"
                    : "the mode \(entry.mode) is off: the \(entry.spelling.prefix { $0 != "." }) dictionary has no \(entry.spelling.split(separator: ".").last ?? "") set to true, which turns it on"
            }
        }
    }

    /// The keys of the registered mode `providerName`, or `nil` when no registered mode has the name.
    func keys(of providerName: String) -> [ModeSettingKey]? {
        let owned = spellings.filter { $0.providerName == providerName && $0.vendor == nil }.map(\.key)
        return owned.isEmpty ? nil : owned
    }

    /// Reads every registered mode's keys from `values`, checking each value as the file spells it.
    func read(_ values: [String: JWTClaimValue]) throws(ConfigurationError) -> Read {
        var read = Read()
        var seen: [String: String] = [:]
        for spelling in spellings {
            let found: JWTClaimValue?
            if spelling.path.count == 1 {
                found = values[spelling.path[0]]
            } else if case .object(let members)? = values[spelling.path[0]] {
                found = members[spelling.path[1]]
            } else {
                found = nil
            }
            let id = "\(spelling.providerName)\u{0}\(spelling.key.name)"
            guard let found else {
                if spelling.choosesMode, values[spelling.path[0]] != nil {
                    read.switchesOff.append((spelling.providerName, spelling.dotted, false))
                }
                continue
            }
            if let earlier = seen[id] {
                // The key's own name first; between two vendor spellings, the order of their names.
                // (The key's own spelling comes first in `spellings`.)
                let (first, second) = earlier == spelling.key.name || earlier < spelling.dotted ? (earlier, spelling.dotted) : (spelling.dotted, earlier)
                let vendor = spellings.first { $0.dotted == second && $0.key.name == spelling.key.name }?.vendor
                    ?? spellings.first { $0.dotted == first && $0.key.name == spelling.key.name }?.vendor ?? "a vendor"
                throw .invalidValue(key: second, reason: "the file also names \(first); \(second) is \(vendor)'s spelling of the same key, keep one")
            }
            seen[id] = spelling.dotted
            let value = try Self.value(found, of: spelling.key, spelled: spelling.dotted)
            try spelling.key.check(value, spelledKey: spelling.dotted)
            read.given[spelling.providerName, default: []].append((spelling.key, spelling.dotted, value))
            if spelling.choosesMode {
                if value == .bool(true) {
                    read.chosen = (spelling.providerName, spelling.dotted)
                } else {
                    read.switchesOff.append((spelling.providerName, spelling.dotted, true))
                }
            }
        }
        return read
    }

    /// A file's value as a mode setting of `key`'s type; an error names the key as spelt.
    static func value(_ value: JWTClaimValue, of key: ModeSettingKey, spelled: String) throws(ConfigurationError) -> ModeSettings.Value {
        switch (key.type, value) {
        case (.bool, .bool(let flag)): return .bool(flag)
        case (.string, .string(let text)): return .string(text)
        case (.url, .string(let text)):
            guard text.trimmingCharacters(in: .whitespaces) == text else { throw .surroundingWhitespace(key: spelled) }
            guard HeaderFieldRules.check(text) == .valid, let url = URL(string: text) else {
                throw .invalidValue(key: spelled, reason: "'\(ConfigurationError.sanitizedURLText(text))' is not an absolute https URL with a host (and no query or fragment)")
            }
            return .url(url)
        default: throw .wrongType(key: spelled, expected: key.type.expected)
        }
    }
}
