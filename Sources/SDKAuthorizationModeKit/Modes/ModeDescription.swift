import Foundation
import SDKAuthorization

extension NamedProviderFactory {
    /// The text of the mode's `sdkauth-mode.json`: its ``providerName`` and ``settingKeys`` as the
    /// authorization doctor reads them, for a mode written outside the framework.
    ///
    /// The doctor (`sdkauth-config`, `swift package authorization-doctor`) cannot load a mode's
    /// Swift code, so it knows only the built-in modes' keys. A mode package ships this text as
    /// `sdkauth-mode.json` in its target's source folder; the doctor's plugin finds the file in the
    /// app's dependencies and passes it with `--mode-description`, and then checks a configuration
    /// that chooses the mode as the app's registry reads it.
    ///
    /// ```json
    /// {
    ///   "providerName": "DPoPMode.DPoP",
    ///   "product": "DPoPMode",
    ///   "settingKeys": [
    ///     {"name": "dpopTokenURL", "type": "url", "required": true, "meaning": "Where the token is requested."},
    ///     {"name": "dpopNonceRetry", "type": "bool", "default": true, "meaning": "Whether a nonce error is retried once."}
    ///   ]
    /// }
    /// ```
    ///
    /// The text is deterministic: the members in the order above, each key on a line of its own in
    /// the order of ``settingKeys`` with `name`, `type` (`bool`, `string`, `url`, `number` or
    /// `integer`), `default` (when the key has one), `required` (when true), `range` (when the key
    /// has one: `[60, 3600]`), `vendorSpellings` (when there are some: `path`, `vendor`, `choosesMode`) and
    /// `meaning`; two-space indentation, JSON string escaping and a trailing newline. A mode's own
    /// test keeps the committed file current:
    ///
    /// ```swift
    /// @Test func theCommittedModeDescriptionIsCurrent() throws {
    ///     let committed = try String(contentsOf: URL(fileURLWithPath: "Sources/PartnerMode/sdkauth-mode.json"), encoding: .utf8)
    ///     #expect(committed == PartnerTokenMode.modeDescription(product: "PartnerMode"))
    /// }
    /// ```
    ///
    /// A key's validation closure (the `validate:` of a ``ModeSettingKey``) is code and cannot be
    /// described: from this file the doctor checks the keys' names, types,
    /// required keys, defaults and vendor spellings, and the app checks the values when it starts.
    ///
    /// - Parameter product: The product that an app links to get the mode (the doctor names it in
    ///   its messages).
    /// - Returns: The file's text, ending with a newline.
    public static func modeDescription(product: String) -> String {
        var text = "{\n"
        text += "  \"providerName\": \(ModeDescriptionText.quoted(providerName)),\n"
        text += "  \"product\": \(ModeDescriptionText.quoted(product)),\n"
        let keys = settingKeys.map { "    " + ModeDescriptionText.object(for: $0) }
        text += keys.isEmpty ? "  \"settingKeys\": []\n" : "  \"settingKeys\": [\n" + keys.joined(separator: ",\n") + "\n  ]\n"
        return text + "}\n"
    }
}

/// How ``NamedProviderFactory/modeDescription(product:)`` writes its parts.
enum ModeDescriptionText {
    /// One key as a one-line JSON object.
    static func object(for key: ModeSettingKey) -> String {
        var members = ["\"name\": \(quoted(key.name))", "\"type\": \(quoted(typeName(key.type)))"]
        if let value = key.defaultValue { members.append("\"default\": \(json(value))") }
        if key.isRequired { members.append("\"required\": true") }
        if let range = key.range {
            members.append("\"range\": [\(ModeSettingKey.text(range.lowerBound)), \(ModeSettingKey.text(range.upperBound))]")
        }
        if !key.vendorSpellings.isEmpty {
            let spellings = key.vendorSpellings.map { spelling in
                "{\"path\": [\(spelling.path.map(quoted).joined(separator: ", "))], \"vendor\": \(quoted(spelling.vendor)), \"choosesMode\": \(spelling.choosesMode)}"
            }
            members.append("\"vendorSpellings\": [\(spellings.joined(separator: ", "))]")
        }
        members.append("\"meaning\": \(quoted(key.meaning))")
        return "{" + members.joined(separator: ", ") + "}"
    }

    /// The type as the file names it: `bool`, `string`, `url`, `number` or `integer`.
    static func typeName(_ type: ModeSettingKey.ValueType) -> String {
        switch type {
        case .bool: "bool"
        case .string: "string"
        case .url: "url"
        case .number: "number"
        case .integer: "integer"
        }
    }

    /// A value as JSON: a boolean, a string (a URL as its text) or a number.
    static func json(_ value: ModeSettings.Value) -> String {
        switch value {
        case .bool(let flag): "\(flag)"
        case .string(let text): quoted(text)
        case .url(let url): quoted(url.absoluteString)
        case .number(let number): ModeSettingKey.text(number)
        case .integer(let number): String(number)
        }
    }

    /// `text` as a JSON string: quotes, backslashes and control characters escaped, every other
    /// character as it is.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\u{8}": result += "\\b"
            case "\u{C}": result += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16, uppercase: false)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
