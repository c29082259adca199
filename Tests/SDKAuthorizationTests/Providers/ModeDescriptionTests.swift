import Foundation
import Testing
import TestSupport
import SDKAuthorization

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
