import Foundation
import ProviderRegistrationGenerator
import SDKAuthorization
import SDKAuthorizationModeKit
import SDKAuthorizationEngagement

/// The contents of `sdkauth-mode.json`: a mode written outside the framework, described for the
/// doctor, which cannot load its code (`NamedProviderFactory.modeDescription(product:)` writes it),
/// read as the mode kit's `ModeDescription`, the description start-up uses.
///
/// ```json
/// {
///   "providerName": "DPoPMode.DPoP",
///   "product": "DPoPMode",
///   "settingKeys": [
///     {"name": "dpopTokenURL", "type": "url", "required": true, "meaning": "Where the token is requested."},
///     {"name": "maxTokenAge", "type": "integer", "default": 600, "range": [60, 3600], "meaning": "Seconds a token is used at most."},
///     {"name": "x", "type": "string", "vendorSpellings": [{"path": ["Vendor", "X"], "vendor": "Vendor", "choosesMode": false}], "meaning": "..."}
///   ]
/// }
/// ```
///
/// Read as ``ProviderManifest`` is read: the same limits (a symbolic link, directory or FIFO is
/// refused, and so is a file larger than ``maximumFileSize``, before it is read), the same strict
/// JSON reader, and every problem reported at its `line:column`. An unknown member is refused, so
/// a misspelt `requried` is not silently ignored.
extension ModeDescription {
    /// The file name the plugin looks for in the folders of a target's dependencies.
    package static let fileName = "sdkauth-mode.json"

    /// Larger than any real description: a bigger file is refused before it is read.
    package static let maximumFileSize = 1 << 20

    /// One problem in a description: `path:line:column: error: key "name": message`.
    package struct Problem: Error, Sendable, Equatable {
        /// Where it is: the member or value concerned, or 1:1 for the whole file.
        package let position: SourcePosition
        /// `key "name"` or `key 2` (1-based) when the key has no usable name; nil for the file.
        package let key: String?
        /// What is wrong, in words; values from the file are quoted and escaped.
        package let message: String

        /// The message with the key it is about, if any.
        package var text: String { key.map { "\($0): \(message)" } ?? message }
    }

    /// Every problem of a description, in file order; never empty.
    package struct Problems: Error, Sendable, Equatable {
        package let list: [Problem]
    }

    /// Reads the description at `path` with the limits of ``ProviderManifest/read(atPath:)``; a file
    /// that cannot be read is one problem at 1:1.
    package static func read(atPath path: String) -> Result<ModeDescription, Problems> {
        let bytes: [UInt8]
        do {
            bytes = Array(try ExternalFile.read(atPath: path, limit: maximumFileSize))
        } catch .tooLarge {
            return .failure(Problems(list: [Problem(at: SourcePosition(line: 1, column: 1), "the mode description is larger than \(maximumFileSize) bytes")]))
        } catch {
            return .failure(Problems(list: [Problem(at: SourcePosition(line: 1, column: 1), "cannot read \(fileName): \(error.reason)")]))
        }
        return parse(bytes)
    }

    /// Reads a description; every problem found is returned, in file order.
    package static func parse(_ bytes: [UInt8]) -> Result<ModeDescription, Problems> {
        let root: PositionedJSON
        do {
            root = try PositionedJSON.parse(bytes)
        } catch {
            return .failure(Problems(list: [Problem(at: error.position, "malformed JSON: \(error.message)")]))
        }
        guard case .object(let members, let rootPosition) = root else {
            return .failure(Problems(list: [Problem(at: root.position, "expected an object with \"providerName\", \"product\" and \"settingKeys\", found \(root.kind)")]))
        }
        var problems: [Problem] = []
        let found = Members(members, allowed: ["providerName", "product", "settingKeys"], label: nil, problems: &problems)
        for name in ["providerName", "product", "settingKeys"] where !found.has(name) {
            problems.append(Problem(at: rootPosition, "missing \(quoted(name))"))
        }
        let providerName = found.string("providerName", problems: &problems)
        if let (name, position) = providerName {
            do {
                try AuthorizationConfiguration.checkProviderName(name)
                if let builtIn = BuiltInProviderName.modes.first(where: { $0.providerName == name }) {
                    problems.append(Problem(at: position, "\(quoted(name)) is a built-in mode (product \(builtIn.product)); the doctor knows its keys, and a description cannot replace them"))
                }
            } catch {
                problems.append(Problem(at: position, "invalid providerName: \(error.reason ?? error.message)"))
            }
        }
        let product = found.string("product", problems: &problems)
        if let (text, position) = product, text.isEmpty {
            problems.append(Problem(at: position, "\"product\" must not be empty"))
        }
        var keys: [ModeSettingKey] = []
        if let value = found["settingKeys"] {
            if case .array(let elements, _) = value {
                var firstLineOfName: [String: Int] = [:]
                for (offset, element) in elements.enumerated() {
                    // A second key of one name is refused even when either has problems of its own.
                    if case .object(let members, let position) = element,
                       case .string(let name, _)? = members.first(where: { $0.key == "name" })?.value, !name.isEmpty {
                        if let first = firstLineOfName[name] {
                            problems.append(Problem(at: position, key: "key \(quoted(name))", "duplicate name; line \(first) declares it already"))
                            continue
                        }
                        firstLineOfName[name] = position.line
                    }
                    if let key = settingKey(element, number: offset + 1, problems: &problems) { keys.append(key) }
                }
            } else {
                problems.append(Problem(at: value.position, "\"settingKeys\" must be an array, found \(value.kind)"))
            }
        }
        guard problems.isEmpty, let (name, _) = providerName, let (productName, _) = product else { return .failure(Problems(list: problems)) }
        return .success(ModeDescription(providerName: name, settingKeys: keys, product: productName))
    }

    /// One key of `settingKeys`, or nil after adding its problems.
    private static func settingKey(_ element: PositionedJSON, number: Int, problems: inout [Problem]) -> ModeSettingKey? {
        guard case .object(let members, let position) = element else {
            problems.append(Problem(at: element.position, key: "key \(number)", "expected an object with \"name\", \"type\" and \"meaning\", found \(element.kind)"))
            return nil
        }
        // Named by its name once it has a string one, so every message says which key it is.
        var label = "key \(number)"
        for member in members where member.key == "name" {
            if case .string(let name, _) = member.value, !name.isEmpty { label = "key \(quoted(name))" }
        }
        let before = problems.count
        let found = Members(members, allowed: ["name", "type", "default", "required", "range", "vendorSpellings", "meaning"], label: label, problems: &problems)
        for name in ["name", "type", "meaning"] where !found.has(name) {
            problems.append(Problem(at: position, key: label, "missing \(quoted(name))"))
        }
        let name = found.string("name", problems: &problems)
        if let (text, namePosition) = name {
            // What the app's registry accepts (any name), but for the names no configuration could hold.
            if text.isEmpty {
                problems.append(Problem(at: namePosition, key: label, "\"name\" must not be empty"))
            } else if AuthorizationConfiguration.fileKeys.contains(text) {
                problems.append(Problem(at: namePosition, key: label, "\(quoted(text)) is an Engagement key of every configuration file; a mode cannot own it"))
            }
        }
        var type: ModeSettingKey.ValueType?
        if let (text, typePosition) = found.string("type", problems: &problems) {
            switch text {
            case "bool": type = .bool
            case "string": type = .string
            case "url": type = .url
            case "number": type = .number
            case "integer": type = .integer
            default: problems.append(Problem(at: typePosition, key: label, "unknown type \(quoted(text)); the types are \"bool\", \"string\", \"url\", \"number\" and \"integer\""))
            }
        }
        var range: ClosedRange<Double>?
        if let value = found["range"] {
            range = self.range(value, of: type, label: label, problems: &problems)
        }
        var defaultValue: ModeSettings.Value?
        if let value = found["default"], let type {
            defaultValue = self.defaultValue(value, of: type, label: label, problems: &problems)
        }
        var required = false
        if let value = found["required"] {
            if case .bool(let flag, _) = value {
                required = flag
            } else {
                problems.append(Problem(at: value.position, key: label, "\"required\" must be true or false, found \(value.kind)"))
            }
        }
        let meaning = found.string("meaning", problems: &problems)
        var spellings: [ModeSettingKey.VendorSpelling] = []
        if let value = found["vendorSpellings"] {
            if case .array(let elements, _) = value {
                for element in elements {
                    if let spelling = vendorSpelling(element, type: type, label: label, problems: &problems) { spellings.append(spelling) }
                }
            } else {
                problems.append(Problem(at: value.position, key: label, "\"vendorSpellings\" must be an array, found \(value.kind)"))
            }
        }
        if let range, let defaultValue, let position = found["default"]?.position {
            let number: Double? = switch defaultValue {
            case .number(let value): value
            case .integer(let value): Double(value)
            default: nil
            }
            if let number, !range.contains(number) {
                problems.append(Problem(at: position, key: label, "\"default\" is outside the key's \"range\""))
            }
        }
        guard problems.count == before, let (keyName, _) = name, let type, let (meaningText, _) = meaning else { return nil }
        return ModeSettingKey(keyName, type: type, default: defaultValue, required: required, range: range, meaning: meaningText, vendorSpellings: spellings)
    }

    /// A key's `range`: two numbers, the lowest and the highest value accepted, of a number or
    /// integer key (whole numbers for an integer key).
    private static func range(_ value: PositionedJSON, of type: ModeSettingKey.ValueType?, label: String,
                              problems: inout [Problem]) -> ClosedRange<Double>? {
        guard let type else { return nil }
        guard type == .number || type == .integer else {
            problems.append(Problem(at: value.position, key: label, "only a number or integer key can have a \"range\""))
            return nil
        }
        guard case .array(let bounds, _) = value, bounds.count == 2,
              case .number(let lowText, _) = bounds[0], case .number(let highText, _) = bounds[1],
              let low = Double(lowText), let high = Double(highText), low.isFinite, high.isFinite, low <= high,
              type == .number || (Int(exactly: low) != nil && Int(exactly: high) != nil) else {
            let numbers = type == .integer ? "whole numbers" : "numbers"
            problems.append(Problem(at: value.position, key: label, "\"range\" must be an array of two \(numbers), the lowest and the highest value accepted"))
            return nil
        }
        return low...high
    }

    /// A key's `default`: a boolean for a `bool` key, a string for a `string` one, a URL's text for a
    /// `url` one (the app fills a default in unchecked, so any URL the mode declares is accepted).
    private static func defaultValue(_ value: PositionedJSON, of type: ModeSettingKey.ValueType, label: String,
                                     problems: inout [Problem]) -> ModeSettings.Value? {
        switch (type, value) {
        case (.bool, .bool(let flag, _)): return .bool(flag)
        case (.string, .string(let text, _)): return .string(text)
        case (.url, .string(let text, let position)):
            guard let url = URL(string: text) else {
                problems.append(Problem(at: position, key: label, "\"default\" of a url key must be a URL, found \(quoted(text))"))
                return nil
            }
            return .url(url)
        case (.number, .number(let text, let position)), (.integer, .number(let text, let position)):
            // An integer's digits read exactly: a double past 2^53 rounds them (Int.max out of range).
            if type == .integer, let whole = Int(text) { return .integer(whole) }
            guard let number = Double(text), number.isFinite else {
                problems.append(Problem(at: position, key: label, "\"default\" must be a finite number, found \(quoted(text))"))
                return nil
            }
            guard type == .integer else { return .number(number) }
            guard let whole = Int(exactly: number) else {
                problems.append(Problem(at: position, key: label, "\"default\" of an integer key must be a whole number, found \(quoted(text))"))
                return nil
            }
            return .integer(whole)
        default:
            let expected = switch type {
            case .bool: "true or false"
            case .number, .integer: "a number"
            case .string, .url: "a string"
            }
            problems.append(Problem(at: value.position, key: label, "\"default\" of a \(ModeDescriptionTypeName.name(type)) key must be \(expected), found \(value.kind)"))
            return nil
        }
    }

    /// One of a key's `vendorSpellings`, or nil after adding its problems.
    private static func vendorSpelling(_ element: PositionedJSON, type: ModeSettingKey.ValueType?, label: String,
                                       problems: inout [Problem]) -> ModeSettingKey.VendorSpelling? {
        guard case .object(let members, let position) = element else {
            problems.append(Problem(at: element.position, key: label, "a vendor spelling must be an object with \"path\" and \"vendor\", found \(element.kind)"))
            return nil
        }
        let before = problems.count
        let found = Members(members, allowed: ["path", "vendor", "choosesMode"], label: label, problems: &problems)
        for name in ["path", "vendor"] where !found.has(name) {
            problems.append(Problem(at: position, key: label, "a vendor spelling is missing \(quoted(name))"))
        }
        var path: [String] = []
        if let value = found["path"] {
            if case .array(let parts, _) = value, (1...2).contains(parts.count) {
                for part in parts {
                    if case .string(let text, _) = part, !text.isEmpty {
                        path.append(text)
                    } else {
                        problems.append(Problem(at: part.position, key: label, "each part of a vendor spelling's \"path\" must be a non-empty string"))
                    }
                }
            } else {
                problems.append(Problem(at: value.position, key: label, "a vendor spelling's \"path\" must be an array of one or two names (a top-level key, or a dictionary and a key in it)"))
            }
            // As the app's registry refuses it: a partner's switch spelt `advancedAuthEnabled` would take over a plain Exponea file.
            if let head = path.first, AuthorizationConfiguration.fileKeys.contains(head) {
                problems.append(Problem(at: value.position, key: label, "\(quoted(head)) is an Engagement key of every configuration file; a vendor spelling cannot be another product's key"))
            }
        }
        let vendor = found.string("vendor", problems: &problems)
        var choosesMode = false
        if let value = found["choosesMode"] {
            if case .bool(let flag, _) = value {
                choosesMode = flag
                if flag, let type, type != .bool {
                    problems.append(Problem(at: value.position, key: label, "only a bool key's vendor spelling can choose the mode"))
                }
            } else {
                problems.append(Problem(at: value.position, key: label, "\"choosesMode\" must be true or false, found \(value.kind)"))
            }
        }
        guard problems.count == before, let (vendorName, _) = vendor else { return nil }
        return ModeSettingKey.VendorSpelling(path, vendor: vendorName, choosesMode: choosesMode)
    }

    /// A value from the file, quoted and cut short for a message.
    static func quoted(_ text: String) -> String { LogText.doubleQuoted(text, limit: 80) }
}

extension ModeDescription.Problem {
    init(at position: SourcePosition, key: String? = nil, _ message: String) {
        self.init(position: position, key: key, message: message)
    }
}

/// The type as a description names it.
private enum ModeDescriptionTypeName {
    static func name(_ type: ModeSettingKey.ValueType) -> String {
        switch type {
        case .bool: "bool"
        case .string: "string"
        case .url: "url"
        case .number: "number"
        case .integer: "integer"
        }
    }
}

/// An object's members by name: an unknown or repeated member is a problem at its name.
private struct Members {
    private var values: [String: PositionedJSON] = [:]
    private let label: String?

    init(_ members: [PositionedJSON.Member], allowed: [String], label: String?, problems: inout [ModeDescription.Problem]) {
        self.label = label
        let list = allowed.map { "\"\($0)\"" }.joined(separator: ", ")
        for member in members {
            guard allowed.contains(member.key) else {
                problems.append(ModeDescription.Problem(at: member.keyPosition, key: label,
                                                        "unknown member \(ModeDescription.quoted(member.key)); the members are \(list)"))
                continue
            }
            guard values[member.key] == nil else {
                problems.append(ModeDescription.Problem(at: member.keyPosition, key: label, "\(ModeDescription.quoted(member.key)) appears twice"))
                continue
            }
            values[member.key] = member.value
        }
    }

    subscript(name: String) -> PositionedJSON? { values[name] }

    func has(_ name: String) -> Bool { values[name] != nil }

    /// The string member `name`, or nil (a problem when it is there but not a string).
    func string(_ name: String, problems: inout [ModeDescription.Problem]) -> (String, SourcePosition)? {
        guard let value = values[name] else { return nil }
        guard case .string(let text, let position) = value else {
            problems.append(ModeDescription.Problem(at: value.position, key: label, "\(ModeDescription.quoted(name)) must be a string, found \(value.kind)"))
            return nil
        }
        return (text, position)
    }
}
