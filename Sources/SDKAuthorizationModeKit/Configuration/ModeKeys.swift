import Foundation
import SDKAuthorization

/// The configuration keys of the modes registered with the registry that reads a file: how the
/// reader accepts exactly those keys (besides the keys of the file's own schema), under their names
/// and their vendors' spellings, top-level or in a vendor's dictionary. Its public face is
/// ``ConfigurationFile/Modes``.
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
    /// The keys of the file's own schema (the Engagement configuration's `advancedAuthEnabled`, say).
    let schemaKeys: Set<String>
    /// The schema's key whose value names the mode the file chooses, as messages name it.
    let modeKey: String
    /// The modes the registry knows of without holding them (described, or built in): a file key
    /// of one names the mode to register.
    let described: [ModeDescription]

    init(_ keys: [(providerName: String, key: ModeSettingKey)], described: [ModeDescription] = [], schemaKeys: Set<String> = [],
         modeKey: String = "mode") {
        self.described = described
        self.schemaKeys = schemaKeys
        self.modeKey = modeKey
        spellings = keys.flatMap { entry in
            [Spelling(providerName: entry.providerName, key: entry.key, path: [entry.key.name], vendor: nil, choosesMode: false)]
                + entry.key.vendorSpellings.filter { (1...2).contains($0.path.count) }.map {
                    Spelling(providerName: entry.providerName, key: entry.key, path: $0.path, vendor: $0.vendor, choosesMode: $0.choosesMode)
                }
        }
    }

    /// The top-level names that are a vendor's dictionary of mode keys (`Braze`).
    var dictionaryNames: Set<String> { Set(spellings.filter { $0.path.count == 2 }.map { $0.path[0] }) }

    /// Refuses every key that is neither the schema's nor a registered mode's, naming the
    /// file, the key, and the key it may mean or the mode to register.
    ///
    /// `unregisteredMode` is the name the file chooses when nothing is registered under it: unknown
    /// keys none of which is close to a known one are then that mode's, and the error says the mode
    /// is not registered (`ConfigurationError.Code.modeNotRegistered`) instead of "unknown keys".
    func refuseUnknownKeys(in values: [String: JWTClaimValue], fileName: String?, unregisteredMode: String? = nil) throws(ConfigurationError) {
        var work = 0
        try refuseUnknownKeys(in: values, fileName: fileName, unregisteredMode: unregisteredMode, work: &work)
    }

    /// The same, adding the steps its "did you mean" took to `work` (``NearestName/work``).
    func refuseUnknownKeys(in values: [String: JWTClaimValue], fileName: String?, unregisteredMode: String? = nil,
                           work: inout Int) throws(ConfigurationError) {
        let topLevel = schemaKeys.union(spellings.filter { $0.path.count == 1 }.map(\.path[0])).union(dictionaryNames)
        var unknown: [String] = []
        for key in values.keys where !topLevel.contains(key) { unknown.append(key) }
        var membersByDictionary: [String: Set<String>] = [:]
        for spelling in spellings where spelling.path.count == 2 { membersByDictionary[spelling.path[0], default: []].insert(spelling.path[1]) }
        for name in dictionaryNames.sorted() {
            guard let value = values[name] else { continue }
            guard case .object(let members) = value else { throw .wrongType(key: name, expected: "a dictionary") }
            let known = membersByDictionary[name] ?? []
            for member in members.keys where !known.contains(member) { unknown.append("\(name).\(member)") }
        }
        guard !unknown.isEmpty else { return }
        unknown.sort()
        // "did you mean" for the first few unknown keys only, each compared with a bounded number
        // of candidates (NearestName): a file of thousands of unknown keys read with a registry
        // of thousands of keys costs linear work, not their product.
        var nearest = NearestName(candidates: topLevel.union(spellings.filter { $0.path.count == 2 }.map(\.dotted)))
        let hints = unknown.prefix(NearestName.maximumNames).map { key in hint(forUnknown: key, nearest: &nearest) }
        work += nearest.work
        if let unregisteredMode, hints.allSatisfy({ $0 == nil }) {
            throw ConfigurationError.modeNotRegistered(unregisteredMode, keys: unknown, modeKey: modeKey)
        }
        let place = fileName.map { "in \(LogText.escaped($0, limit: 128))" }
        let said = ([place].compactMap { $0 } + hints.compactMap { $0 }).joined(separator: "; ")
        throw said.isEmpty ? ConfigurationError.unknownKeys(unknown) : ConfigurationError.unknownKeys(unknown).appendingHint(said)
    }

    /// "did you mean", or which described mode to register, for an unknown key.
    private func hint(forUnknown key: String, nearest: inout NearestName) -> String? {
        let shown = LogText.escaped(key, limit: 64)
        let head = String(key.prefix { $0 != "." })
        if let mode = described.first(where: { $0.owns(fileKey: head) && !isRegistered($0.providerName) }) {
            let registration = mode.registration.map { LogText.readable($0, limit: 128) } ?? "the mode"
            return "\(shown) is a key of the mode \(LogText.typeName(mode.providerName)), which is not registered: register \(registration) (product \(LogText.readable(mode.product, limit: 128))) with the registry that reads the file"
        }
        return nearest.nearest(to: key).map { "\(shown): did you mean '\($0)'?" }
    }

    /// What a file says to the registered modes.
    struct Read {
        /// Each given key's value, by mode, with the spelling the file used.
        var given: [String: [(key: ModeSettingKey, spelled: String, value: ModeSettings.Value)]] = [:]
        /// A value refused for a mode under a spelling other modes own too, by mode: thrown only
        /// when the file chooses that mode (the key is that mode's only then).
        var refused: [String: ConfigurationError] = [:]
        /// The modes a vendor's switch turned on, each with the switch as spelt, in registration order.
        var choosers: [(mode: String, spelling: String)] = []
        /// The vendor switches present but not on: (mode, switch, absent or false).
        var switchesOff: [(mode: String, spelling: String, present: Bool)] = []

        /// The mode a vendor's switch turned on, and the switch as spelt: one mode, or the one of
        /// several whose switches are on that `providerName` names.
        ///
        /// - Throws: `ConfigurationError` when the switches turn on several modes and `providerName`
        ///   names none of them.
        func chosen(providerName: String?, modeKey: String) throws(ConfigurationError) -> (mode: String, spelling: String)? {
            guard let first = choosers.first else { return nil }
            if let providerName, let named = choosers.first(where: { $0.mode == providerName }) { return named }
            let modes = choosers.map(\.mode).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
            guard modes.count > 1 else { return first }
            guard providerName == nil else { return first }   // the caller says the switch and providerName disagree
            throw .invalidValue(key: first.spelling, reason: "it turns on the modes \(modes.map(LogText.typeName).joined(separator: " and ")); set \(modeKey) to the one meant")
        }

        /// The settings of the mode `providerName` chooses, checked against its keys; a key of
        /// another mode is refused, naming the key as written, unless the chosen mode owns a key
        /// spelt the same (two modes may own keys of one name: the file's is the chosen mode's).
        func settings(forProviderName providerName: String?, keys: ModeKeys) throws(ConfigurationError) -> ModeSettings {
            let chosenSpellings = Set(providerName.map { name in keys.spellings.filter { $0.providerName == name }.map(\.dotted) } ?? [])
            for mode in given.keys.sorted() where mode != providerName {
                // A vendor's switch left off is the vendor's way of saying "mode off".
                for entry in given[mode]! where !isSwitchOff(entry.spelled) && !chosenSpellings.contains(entry.spelled) {
                    throw .invalidValue(key: entry.spelled, reason: "it applies only to the mode \(mode); set \(keys.modeKey) to \(mode) or remove it")
                }
            }
            for mode in refused.keys.sorted() where mode != providerName {
                // A refused value under a spelling the chosen mode does not own either.
                if case let key? = refused[mode]?.key, !chosenSpellings.contains(key) {
                    throw .invalidValue(key: key, reason: "it applies only to the mode \(mode); set \(keys.modeKey) to \(mode) or remove it")
                }
            }
            guard let providerName, let modeKeys = keys.keys(of: providerName) else { return ModeSettings() }
            if let error = refused[providerName] { throw error }
            var values: [String: ModeSettings.Value] = [:]
            for entry in given[providerName] ?? [] { values[entry.key.name] = entry.value }
            return try ModeSettings(values).checked(for: modeKeys, providerName: providerName)
        }

        /// The keys the file gives the mode `providerName`, as spelt, sorted, but a vendor's switch
        /// left off (which says "mode off").
        func keysGiven(to providerName: String) -> [String] {
            (given[providerName] ?? []).map(\.spelled).filter { !isSwitchOff($0) }.sorted()
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

    /// Whether a mode registered with the registry has the name `providerName` (and keys).
    private func isRegistered(_ providerName: String) -> Bool {
        spellings.contains { $0.providerName == providerName }
    }

    /// The keys of the registered mode `providerName`, or `nil` when no registered mode has the name.
    func keys(of providerName: String) -> [ModeSettingKey]? {
        let owned = spellings.filter { $0.providerName == providerName && $0.vendor == nil }.map(\.key)
        return owned.isEmpty ? nil : owned
    }

    /// Reads every registered mode's keys from `values`, checking each value as the file spells it.
    /// A value under a spelling several modes own is checked for each, and a refusal is kept for
    /// the mode it concerns (``Read/refused``): the file may choose another.
    func read(_ values: [String: JWTClaimValue]) throws(ConfigurationError) -> Read {
        var read = Read()
        var seen: [String: String] = [:]
        var owners: [String: Set<String>] = [:]
        for spelling in spellings { owners[spelling.dotted, default: []].insert(spelling.providerName) }
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
            let value: ModeSettings.Value
            do throws(ConfigurationError) {
                value = try Self.value(found, of: spelling.key, spelled: spelling.dotted)
                try spelling.key.check(value, spelledKey: spelling.dotted)
            } catch {
                guard (owners[spelling.dotted]?.count ?? 0) > 1 else { throw error }
                if read.refused[spelling.providerName] == nil { read.refused[spelling.providerName] = error }
                continue
            }
            read.given[spelling.providerName, default: []].append((spelling.key, spelling.dotted, value))
            if spelling.choosesMode {
                if value == .bool(true) {
                    read.choosers.append((spelling.providerName, spelling.dotted))
                } else {
                    read.switchesOff.append((spelling.providerName, spelling.dotted, true))
                }
            }
        }
        return read
    }

    /// 2^53 - 1: the largest whole number a file's number (read as a double) is known to be
    /// exactly; 2^53 may be 2^53 + 1 rounded.
    static let largestExactInteger: Double = 9_007_199_254_740_991

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
        case (.number, .number(let number)): return .number(number)
        case (.integer, .number(let number)):
            guard number == number.rounded(.towardZero) else {
                throw .invalidValue(key: spelled, reason: "\(number) is not a whole number; expected \(key.expected)")
            }
            // A file's number is read as a double, which holds every whole number only up to 2^53:
            // past it, the file's digits may already have been rounded to another number.
            guard abs(number) <= Self.largestExactInteger, let whole = Int(exactly: number) else {
                throw .invalidValue(key: spelled, reason: "it is beyond ±\(Int(Self.largestExactInteger)), the largest whole number a configuration file holds exactly; expected \(key.expected)")
            }
            return .integer(whole)
        default: throw .wrongType(key: spelled, expected: key.expected)
        }
    }
}

extension ConfigurationError.Code {
    /// A configuration file chooses a mode that is not registered with the registry reading it,
    /// and gives it keys no registered mode owns; `ConfigurationError.name` is the mode's name,
    /// `ConfigurationError.keys` the keys.
    public static let modeNotRegistered = Self(rawValue: "modeNotRegistered")
}

extension ConfigurationError {
    /// The file chooses `name` (under `modeKey`), which is not registered, and gives it `keys`,
    /// which no registered mode owns: the keys are the unregistered mode's, not misspelt ones.
    static func modeNotRegistered(_ name: String, keys: [String], modeKey: String) -> ConfigurationError {
        let shownKeys = keys.sorted().map { LogText.escaped($0, limit: 64) }.joined(separator: ", ")
        return ConfigurationError(.modeNotRegistered,
             "The mode \(LogText.typeName(name)) is not registered: the file chooses it (\(modeKey)) and gives it \(keys.count == 1 ? "the key" : "the keys") \(shownKeys), which only a registered mode declares; register the mode with the registry that reads the file (ProviderRegistry.register(_:)), or correct \(modeKey).",
             keys: keys, name: name)
    }
}
