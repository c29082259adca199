import Foundation
import SDKAuthorization

/// A mode as an app, a registry and the authorization doctor know it without its code: the name a
/// configuration chooses it by, its configuration keys, the product that provides it and how it is
/// registered.
///
/// Every mode has one (``NamedProviderFactory/modeDescription``), and a registry told of a mode it
/// does not hold (``ProviderRegistry/describe(_:)``) gives the same hints for it as for a built-in
/// mode: a configuration that chooses it hears which product to link and what to register, a name
/// close to it hears "did you mean", and a file key of the mode names the mode.
///
/// ```swift
/// registry.describe(ModeDescription(providerName: "PartnerSDK.PartnerToken", product: "PartnerMode",
///                                   registration: "PartnerTokenMode(session:)"))
/// ```
public struct ModeDescription: Sendable {
    /// The name a configuration chooses the mode by (``NamedProviderFactory/providerName``).
    public let providerName: String
    /// The configuration keys the mode owns (``NamedProviderFactory/settingKeys``).
    public let settingKeys: [ModeSettingKey]
    /// The product an app links to get the mode.
    public let product: String
    /// How the app registers the mode, as hints show it (`SignatureMode()`,
    /// `TokenExchangeMode(signer:)`); `nil` when the mode does not say, and hints say "the mode".
    public let registration: String?

    /// A description of the mode `providerName`.
    ///
    /// - Parameters:
    ///   - providerName: The name a configuration chooses the mode by.
    ///   - settingKeys: The configuration keys the mode owns; none by default.
    ///   - product: The product an app links to get the mode.
    ///   - registration: How the app registers the mode (`PartnerTokenMode(session:)`), or `nil`.
    public init(providerName: String, settingKeys: [ModeSettingKey] = [], product: String, registration: String? = nil) {
        self.providerName = providerName
        self.settingKeys = settingKeys
        self.product = product
        self.registration = registration
    }

    /// Whether the mode owns the file key `key`: one of its keys, or the first part of one of its
    /// vendors' spellings (a top-level key or a vendor's dictionary: `Braze`).
    public func owns(fileKey key: String) -> Bool {
        settingKeys.contains { $0.name == key || $0.vendorSpellings.contains { $0.path.first == key } }
    }

    /// What the app does to choose the mode: "link P to the app's target and register R with the
    /// registry", as the hints say it.
    var linkAndRegister: String {
        "link \(shownProduct) to the app's target and register \(shownRegistration) with the registry"
    }

    /// The product as messages show it: escaped, cut short.
    var shownProduct: String { LogText.readable(product, limit: 128) }

    /// The registration as messages show it (`the mode` when the description does not say).
    var shownRegistration: String {
        registration.map { LogText.readable($0, limit: 128) } ?? "the mode"
    }
}

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
    /// The file does not carry the mode's registration (``ModeDescription/registration``): the
    /// doctor's hints for a described mode say "register the mode".
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
        text += "  \"providerName\": \(JSONWriter.string(providerName)),\n"
        text += "  \"product\": \(JSONWriter.string(product)),\n"
        let keys = settingKeys.map { "    " + ModeDescriptionText.object(for: $0) }
        text += keys.isEmpty ? "  \"settingKeys\": []\n" : "  \"settingKeys\": [\n" + keys.joined(separator: ",\n") + "\n  ]\n"
        return text + "}\n"
    }
}

/// How ``NamedProviderFactory/modeDescription(product:)`` writes its parts.
enum ModeDescriptionText {
    /// One key as a one-line JSON object.
    static func object(for key: ModeSettingKey) -> String {
        var members = ["\"name\": \(JSONWriter.string(key.name))", "\"type\": \(JSONWriter.string(typeName(key.type)))"]
        if let value = key.defaultValue { members.append("\"default\": \(json(value))") }
        if key.isRequired { members.append("\"required\": true") }
        if let range = key.range {
            members.append("\"range\": [\(ModeSettingKey.text(range.lowerBound)), \(ModeSettingKey.text(range.upperBound))]")
        }
        if !key.vendorSpellings.isEmpty {
            let spellings = key.vendorSpellings.map { spelling in
                "{\"path\": [\(spelling.path.map(JSONWriter.string).joined(separator: ", "))], \"vendor\": \(JSONWriter.string(spelling.vendor)), \"choosesMode\": \(spelling.choosesMode)}"
            }
            members.append("\"vendorSpellings\": [\(spellings.joined(separator: ", "))]")
        }
        members.append("\"meaning\": \(JSONWriter.string(key.meaning))")
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
        case .string(let text): JSONWriter.string(text)
        case .url(let url): JSONWriter.string(url.absoluteString)
        case .number(let number): ModeSettingKey.text(number)
        case .integer(let number): String(number)
        }
    }
}
