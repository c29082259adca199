import Foundation
import Testing
import TestSupport
@testable import SDKAuthorization
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

    /// A configuration read from a JSON file of the project keys plus `keys` (raw JSON members).
    private func file(_ keys: String) throws -> AuthorizationConfiguration {
        let project = #""projectToken": "project-1", "baseURL": "https://api.example.com", "authorization": "Token api-key-1""#
        return try AuthorizationConfiguration(data: Data("{\(project)\(keys.isEmpty ? "" : ", ")\(keys)}".utf8), format: .json)
    }

    @Test func theEngagementConfigurationCarriesTheSignatureAndTokenExchangeKeys() throws {
        let url = try #require(URL(string: "https://auth.example.com/exchange"))
        let exchange = try file(#""advancedAuthEnabled": true, "providerName": "SDKAuthorization.TokenExchange", "tokenExchangeURL": "https://auth.example.com/exchange""#)
        #expect(exchange.modeSettings == ModeSettings(["signatureAuthenticationEnabled": .bool(true), "tokenExchangeURL": .url(url)]))
        let signature = try file(#""providerName": "SDKAuthorization.Signature", "signatureAuthenticationEnabled": false"#)
        #expect(signature.modeSettings == ModeSettings(["signatureAuthenticationEnabled": .bool(false)]))
        #expect(try file("").modeSettings == ModeSettings(["signatureAuthenticationEnabled": .bool(true)]))
    }

    @Test func aLoggedURLKeepsSchemeHostPortAndPathOnly() throws {
        let url = try #require(URL(string: "https://user:secret@api.example.com:8443/v1/token?code=s3cret#frag"))
        #expect(LogText.url(url) == "https://api.example.com:8443/v1/token?…")
        #expect(LogText.url(try #require(URL(string: "http://127.0.0.1/x"))) == "http://127.0.0.1/x")
    }
}
