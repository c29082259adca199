import Foundation
import SDKAuthorization

extension ConfigurationFile {
    /// What a configuration file says to the modes a ``ProviderRegistry`` holds: every registered
    /// mode's keys read from the file (under their names and their vendors' spellings, top-level or
    /// in a vendor's dictionary) and checked against the mode's ``ModeSettingKey``s, and every key
    /// that neither the file's own schema nor a registered mode owns refused.
    ///
    /// A schema (a mode's, an SDK's) names its own keys and the key whose value chooses the mode,
    /// reads its own keys from ``ConfigurationFile/values``, and takes the chosen mode's settings
    /// from here; ``ConfigurationFile/modeSettings(registry:modeKey:schemaKeys:otherModes:)`` does
    /// it in one call.
    ///
    /// ```swift
    /// let file = try ConfigurationFile(contentsOf: url)
    /// let modes = try ConfigurationFile.Modes(of: file, registry: registry, modeKey: "mode", schemaKeys: ["mode", "enabled"])
    /// var named: String?
    /// if case .string(let name)? = file.values["mode"] { named = name }
    /// let settings = try modes.settings(for: modes.switchedOn(naming: named)?.mode ?? named)
    /// ```
    public struct Modes {
        private let file: ConfigurationFile
        private let keys: ModeKeys
        private let read: ModeKeys.Read

        /// Reads the keys of `registry`'s modes from `file`.
        ///
        /// - Parameters:
        ///   - file: The file read.
        ///   - registry: The registry whose modes' keys the file may hold.
        ///   - modeKey: The schema's key whose string value names the mode the file chooses (as
        ///     messages name it).
        ///   - schemaKeys: The keys of the file's own schema, `modeKey` among them: a file may hold
        ///     them besides the modes' keys.
        ///   - otherModes: Modes known besides those `registry` holds or describes
        ///     (`ProviderRegistry.describe(_:)`): a key of one of them that is not registered is
        ///     refused naming the mode to register and the product that provides it.
        /// - Throws: `ConfigurationError`, placed in the file: what the registry refused
        ///   (`ProviderRegistry.checkRegistrations()`, a mode owning a schema key); unknown keys
        ///   (`unknownKeys`, saying "did you mean" a known key, or which described mode to register),
        ///   or, when `modeKey` names a mode nothing registers or describes and no unknown key is
        ///   close to a known one, `modeNotRegistered` naming that mode; a mode's value of the wrong
        ///   type, outside its range or refused by its validation; one key under two spellings.
        public init(of file: ConfigurationFile, registry: ProviderRegistry, modeKey: String, schemaKeys: Set<String> = [],
                    otherModes: [ModeDescription] = []) throws(ConfigurationError) {
            try registry.checkRegistrations()
            try registry.checkModes(reserving: schemaKeys, as: "a key of the configuration file's own schema")
            let described = registry.describedModes + otherModes
            let keys = ModeKeys(registry.modeSettingKeys, described: described, schemaKeys: schemaKeys, modeKey: modeKey)
            // Keys no registered mode owns, none close to a known key, in a file whose mode key
            // names nothing registered: the mode they belong to is not registered, which "unknown
            // key" would not say. (A described mode's keys get their own hint: link and register it.)
            var unregisteredMode: String?
            if case .string(let name)? = file.values[modeKey], !described.contains(where: { $0.providerName == name }), !registry.resolves(name) {
                unregisteredMode = name
            }
            do throws(ConfigurationError) {
                try keys.refuseUnknownKeys(in: file.values, fileName: file.name, unregisteredMode: unregisteredMode)
            } catch where error.code == .modeNotRegistered {
                throw file.placing(error)
            }
            do throws(ConfigurationError) {
                read = try keys.read(file.values)
            } catch {
                throw file.placing(error)
            }
            self.file = file
            self.keys = keys
        }

        /// The mode a vendor's switch turns on (a key spelt with `choosesMode`, `true` in the
        /// file), and the switch as the file spells it; of several, the one `name` names. `nil`
        /// when no switch is on.
        ///
        /// - Parameter name: The mode the file's mode key names, if any.
        /// - Throws: `ConfigurationError.invalidValue` naming the switch when switches turn on
        ///   several modes and `name` is `nil`, or when `name` names another mode than the switch
        ///   ("keep one").
        public func switchedOn(naming name: String?) throws(ConfigurationError) -> (mode: String, key: String)? {
            guard let (mode, spelling) = try read.chosen(providerName: name, modeKey: keys.modeKey) else { return nil }
            if let name, name != mode {
                throw .invalidValue(key: spelling, reason: "it turns on the mode \(mode), but \(keys.modeKey) names \(LogText.typeName(name)); keep one")
            }
            return (mode, spelling)
        }

        /// The keys the file gives the mode `name`, as the file spells them, sorted (a vendor's
        /// switch left off, which says "mode off", is not one).
        public func keysGiven(to name: String) -> [String] {
            read.keysGiven(to: name)
        }

        /// The settings of the mode `name`, checked against its keys, with its defaults filled
        /// in; empty when `name` is `nil` (no mode chosen) or names a mode without keys.
        ///
        /// - Throws: `ConfigurationError`, placed in the file: a key of another mode (naming the
        ///   mode and the mode key to set), a required key missing (`missingKey`), a value its key
        ///   refused.
        public func settings(for name: String?) throws(ConfigurationError) -> ModeSettings {
            do throws(ConfigurationError) {
                return try read.settings(forProviderName: name, keys: keys)
            } catch {
                throw file.placing(error)
            }
        }

        /// What is no error but worth telling the developer: each vendor switch the file leaves
        /// off, unless `name` (the mode chosen) is its mode.
        public func notes(for name: String?) -> [String] {
            read.offNotes(providerName: name)
        }
    }

    /// The settings of the mode the file chooses (a vendor's switch turned on, else the string
    /// under `modeKey`), read with ``Modes`` and checked against the mode's keys; empty when the
    /// file chooses no mode.
    ///
    /// - Throws: What ``Modes/init(of:registry:modeKey:schemaKeys:otherModes:)``,
    ///   ``Modes/switchedOn(naming:)`` and ``Modes/settings(for:)`` throw, and
    ///   `ConfigurationError.wrongType` when `modeKey` is not a string.
    public func modeSettings(registry: ProviderRegistry, modeKey: String, schemaKeys: Set<String> = [],
                             otherModes: [ModeDescription] = []) throws(ConfigurationError) -> ModeSettings {
        let modes = try Modes(of: self, registry: registry, modeKey: modeKey, schemaKeys: schemaKeys.union([modeKey]), otherModes: otherModes)
        let named: String?
        switch values[modeKey] {
        case nil: named = nil
        case .string(let name)?: named = name
        default: throw placing(.wrongType(key: modeKey, expected: "a string"))
        }
        return try modes.settings(for: modes.switchedOn(naming: named)?.mode ?? named)
    }
}
