import Foundation
import Testing
import TestSupport
import SDKAuthorization
import SDKAuthorizationModeKit

/// `NamedProviderFactory.modeDescription(product:)`: the text of a mode's `sdkauth-mode.json`,
/// the same for the same keys, so a mode's test can hold its committed file to it.
@Suite("A mode describes itself for the doctor", .hangLimit)
struct ModeDescriptionTests {
    /// A mode with every kind of key: each type, a default of each type, a required key, vendor
    /// spellings (one choosing the mode), a validation, and text that needs escaping.
    struct EveryKindOfKey: NamedProviderFactory {
        static let providerName = "DPoPMode.DPoP"
        static var settingKeys: [ModeSettingKey] {
            [
                ModeSettingKey("dpopTokenURL", type: .url, required: true, meaning: "Where the DPoP-bound access token is requested.",
                               validate: { _ in "never described" }),
                ModeSettingKey("dpopNonceRetry", type: .bool, default: .bool(true), meaning: "Whether a use_dpop_nonce error is retried once."),
                ModeSettingKey("dpopAudience", type: .url, default: .url(URL(string: "https://auth.example.com/token")!),
                               meaning: "The audience of a proof."),
                ModeSettingKey("dpopClientID", type: .string, default: .string("app"), meaning: "The client's \"id\",\ttabbed\\slashed\u{1}."),
                ModeSettingKey("dpopEnabled", type: .bool, meaning: "Turns the mode on (é).",
                               vendorSpellings: [.init(["Vendor", "EnableDPoP"], vendor: "Vendor", choosesMode: true),
                                                 .init(["VendorDPoP"], vendor: "Other")]),
            ]
        }
        func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider { throw CancellationError() }
    }

    struct NoKeys: NamedProviderFactory {
        static let providerName = "Partner.Plain"
        func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider { throw CancellationError() }
    }

    @Test func aModeWithEveryKindOfKeyIsDescribedInAFixedOrderAndLayout() {
        let expected = #"""
            {
              "providerName": "DPoPMode.DPoP",
              "product": "DPoPMode",
              "settingKeys": [
                {"name": "dpopTokenURL", "type": "url", "required": true, "meaning": "Where the DPoP-bound access token is requested."},
                {"name": "dpopNonceRetry", "type": "bool", "default": true, "meaning": "Whether a use_dpop_nonce error is retried once."},
                {"name": "dpopAudience", "type": "url", "default": "https://auth.example.com/token", "meaning": "The audience of a proof."},
                {"name": "dpopClientID", "type": "string", "default": "app", "meaning": "The client's \"id\",\ttabbed\\slashed\u0001."},
                {"name": "dpopEnabled", "type": "bool", "vendorSpellings": [{"path": ["Vendor", "EnableDPoP"], "vendor": "Vendor", "choosesMode": true}, {"path": ["VendorDPoP"], "vendor": "Other", "choosesMode": false}], "meaning": "Turns the mode on (é)."}
              ]
            }

            """#
        #expect(EveryKindOfKey.modeDescription(product: "DPoPMode") == expected)
    }

    @Test func theDescriptionIsValidJSONHoldingTheKeysAsWritten() throws {
        let text = EveryKindOfKey.modeDescription(product: "DPoP\"Mode")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["product"] as? String == "DPoP\"Mode")
        let keys = try #require(object["settingKeys"] as? [[String: Any]])
        #expect(keys.map { $0["name"] as? String } == EveryKindOfKey.settingKeys.map(\.name))
        #expect(keys[3]["meaning"] as? String == "The client's \"id\",\ttabbed\\slashed\u{1}.")
    }

    struct NumberKeys: NamedProviderFactory {
        static let providerName = "Partner.Numbers"
        static var settingKeys: [ModeSettingKey] {
            [ModeSettingKey("maxTokenAge", type: .integer, default: .integer(600), range: 60...3600, meaning: "Seconds a token is used at most."),
             ModeSettingKey("jitter", type: .number, default: .number(0.25), range: 0...0.5, meaning: "Early refresh share."),
             ModeSettingKey("weight", type: .number, meaning: "Any number.")]
        }
        func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider { throw CancellationError() }
    }

    @Test func numberAndIntegerKeysAreDescribedWithTheirDefaultsAndRanges() {
        #expect(NumberKeys.modeDescription(product: "Partner") == #"""
            {
              "providerName": "Partner.Numbers",
              "product": "Partner",
              "settingKeys": [
                {"name": "maxTokenAge", "type": "integer", "default": 600, "range": [60, 3600], "meaning": "Seconds a token is used at most."},
                {"name": "jitter", "type": "number", "default": 0.25, "range": [0, 0.5], "meaning": "Early refresh share."},
                {"name": "weight", "type": "number", "meaning": "Any number."}
              ]
            }

            """#)
    }

    @Test func aNumberKeysCheckNamesItsRange() {
        let key = NumberKeys.settingKeys[0]
        #expect(key.expected == "an integer from 60 to 3600")
        #expect(NumberKeys.settingKeys[2].expected == "a number")
        #expect(throws: ConfigurationError.invalidValue(key: "maxTokenAge", reason: "3601 is outside the range; expected an integer from 60 to 3600")) {
            try key.check(.integer(3601))
        }
        #expect(throws: ConfigurationError.wrongType(key: "maxTokenAge", expected: "an integer from 60 to 3600")) { try key.check(.number(600)) }
        #expect(throws: ConfigurationError.invalidValue(key: "jitter", reason: "it is not a finite number; expected a number from 0 to 0.5")) {
            try NumberKeys.settingKeys[1].check(.number(.nan))
        }
        #expect(throws: Never.self) { try key.check(.integer(60)) }
        #expect(throws: Never.self) { try key.check(.integer(3600)) }
    }

    @Test func aModeWithoutKeysHasAnEmptyList() {
        #expect(NoKeys.modeDescription(product: "Partner") == """
            {
              "providerName": "Partner.Plain",
              "product": "Partner",
              "settingKeys": []
            }

            """)
    }
}
