import Foundation
import Testing
import TestSupport
@testable import SDKAuthorizationDoctor

@Suite("Provider manifests (sdkauth-providers.json)", .hangLimit)
struct ProviderManifestTests {
    private func manifest(_ text: String) throws(ProviderManifest.Failure) -> ProviderManifest {
        try ProviderManifest(data: Data(text.utf8))
    }

    @Test func aManifestListsItsProvidersInOrder() throws {
        let read = try manifest(#"""
        {"providers": [
          {"name": "ExponeaAuthProvider", "type": "MyApp.ExampleAuthProvider", "mode": "customerToken"},
          {"name": "Partner", "type": "MyApp.Outer.PartnerMode", "mode": "factory", "note": "ignored"}
        ]}
        """#)
        #expect(read.providers == [
            ProviderManifest.Entry(name: "ExponeaAuthProvider", type: "MyApp.ExampleAuthProvider", mode: "customerToken"),
            ProviderManifest.Entry(name: "Partner", type: "MyApp.Outer.PartnerMode", mode: "factory"),
        ])
        #expect(read.declares("Partner"))
        #expect(!read.declares("partner"))
    }

    @Test(arguments: [
        ("{", nil),
        (#"{"providers": {}}"#, "providers"),
        (#"[]"#, "providers"),
        (#"{"providers": [1]}"#, "providers[0]"),
        (#"{"providers": [{"type": "A.B", "mode": "factory"}]}"#, "providers[0].name"),
        (#"{"providers": [{"name": " ", "type": "A.B", "mode": "factory"}]}"#, "providers[0].name"),
        (#"{"providers": [{"name": "n", "mode": "factory"}]}"#, "providers[0].type"),
        (#"{"providers": [{"name": "n", "type": "NoModule", "mode": "factory"}]}"#, "providers[0].type"),
        (#"{"providers": [{"name": "n", "type": "A.1B", "mode": "factory"}]}"#, "providers[0].type"),
        (#"{"providers": [{"name": "n", "type": "A..B", "mode": "factory"}]}"#, "providers[0].type"),
        (#"{"providers": [{"name": "n", "type": "A.B", "mode": "class"}]}"#, "providers[0].mode"),
        (#"{"providers": [{"name": "n", "type": "A.B"}]}"#, "providers[0].mode"),
        (#"{"providers": [{"name": "n", "type": "A.B", "mode": "factory"}, {"name": "n", "type": "A.C", "mode": "factory"}]}"#, "providers[1].name"),
        (#"{"providers": [{"name": "n", "name": "m", "type": "A.B", "mode": "factory"}]}"#, "name"),
    ] as [(String, String?)])
    func aBadManifestIsRefusedNamingTheKey(text: String, key: String?) {
        #expect(throws: ProviderManifest.Failure.self) { try manifest(text) }
        do {
            _ = try manifest(text)
        } catch {
            #expect(error.key == key)
            #expect(error.message.hasPrefix("The provider manifest"))
        }
    }

    @Test func aManifestLargerThanAConfigurationFileIsNotRead() {
        let text = #"{"providers": [], "padding": ""# + String(repeating: "x", count: 70_000) + #""}"#
        #expect(throws: ProviderManifest.Failure.self) { try manifest(text) }
    }
}
