import Foundation
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit
@testable import SDKAuthorizationEngagement

/// What a configuration says to the modes (issue 26): values under the configuration's own keys,
/// read by a mode through `ProviderFactoryContext.modeSettings` without knowing the configuration's type.
@Suite("Mode settings", .hangLimit)
struct ModeSettingsTests {
    @Test func aSettingIsFoundByItsKeyAndOnlyAsTheTypeItHas() throws {
        let url = try #require(URL(string: "https://auth.example.com/exchange"))
        let settings = ModeSettings(["enabled": .bool(false), "name": .string("partner"), "endpoint": .url(url)])
        #expect(settings.bool("enabled") == false)
        #expect(settings.string("name") == "partner")
        #expect(settings.url("endpoint") == url)
        #expect(settings["enabled"] == .bool(false))
        #expect(settings.bool("name") == nil)
        #expect(settings.string("endpoint") == nil)
        #expect(settings.url("enabled") == nil)
        #expect(settings.bool("missing") == nil)
        #expect(ModeSettings().values.isEmpty)
    }

    static let exchange = ModeSettingKey("exchangeURL", type: .url, required: true, meaning: "Where.", validate: { value in
        guard case .url(let url) = value, url.scheme == "https" else { return "an https URL is required" }
        return nil
    })
    static let enabled = ModeSettingKey("enabled", type: .bool, default: .bool(true), meaning: "On.")

    @Test func settingsCheckedAgainstAModesKeysGetTheirDefaults() throws {
        let url = try #require(URL(string: "https://auth.example.com/exchange"))
        let checked = try ModeSettings(["exchangeURL": .url(url)]).checked(for: [Self.exchange, Self.enabled], providerName: "Partner.Mode")
        #expect(checked == ModeSettings(["exchangeURL": .url(url), "enabled": .bool(true)]))
    }

    @Test func everyBadSettingIsRefusedNamingItsKey() throws {
        let keys = [Self.exchange, Self.enabled]
        let url = try #require(URL(string: "https://auth.example.com/exchange"))
        #expect(throws: ConfigurationError.missingKey("exchangeURL")) { try ModeSettings().checked(for: keys, providerName: "Partner.Mode") }
        #expect(throws: ConfigurationError.wrongType(key: "enabled", expected: "a boolean")) {
            try ModeSettings(["exchangeURL": .url(url), "enabled": .string("yes")]).checked(for: keys, providerName: "Partner.Mode")
        }
        #expect(throws: ConfigurationError.invalidValue(key: "exchangeURL", reason: "an https URL is required")) {
            try ModeSettings(["exchangeURL": .url(try #require(URL(string: "http://x.example.com")))]).checked(for: keys, providerName: "Partner.Mode")
        }
        #expect(throws: ConfigurationError.unknownKeys(["colour"]).appendingHint("'colour' is not a setting of the mode Partner.Mode")) {
            try ModeSettings(["exchangeURL": .url(url), "colour": .string("red")]).checked(for: keys, providerName: "Partner.Mode")
        }
    }

    @Test func aLoggedURLKeepsSchemeHostPortAndPathOnly() throws {
        let url = try #require(URL(string: "https://user:secret@api.example.com:8443/v1/token?code=s3cret#frag"))
        #expect(LogText.url(url) == "https://api.example.com:8443/v1/token?…")
        #expect(LogText.url(try #require(URL(string: "http://127.0.0.1/x"))) == "http://127.0.0.1/x")
    }
}
