import AuthorizationSamples
import DPoPMode
import Foundation
import ReferenceBackend
import SDKAuthorization
import SDKAuthorizationEngagement
import Testing

/// The DPoP mode written outside the framework (Samples/DPoPMode, a package of its own), chosen by
/// name from the sample app's configuration file, against the reference backend, which checks every
/// proof (signature, key binding, method, URL, time, token hash, one-time use, nonce).
@Suite("DPoP mode written outside the framework, over HTTP", .serialized, .timeLimit(.minutes(3)))
struct DPoPModeEndToEndTests {
    @Test func theSampleChoosesTheModeFromItsFileAndEveryOutcomeIsTheBackendsVerdict() async throws {
        try await withEnvironment { environment, _ in
            let rows = try await DPoPModeSample.run(environment)
            #expect(rows.map(\.verdict) == [
                "20x 200 accepted, 2 token requests", "200 accepted", "200 accepted", "200 accepted",
                "401 invalid_dpop_proof", "401 invalid_token",
                "Unknown configuration keys: 'dpopTokenUrl'. (in 'dpop-authorization.json'; 'dpopTokenUrl': did you mean 'dpopTokenURL'?)",
            ])
            for row in rows { #expect(row.asExpected, "\(row.mode): \(row.verdict)") }
        }
    }

    /// A proof names the URL it was made for: the hop of a redirect within the origin is accepted
    /// only because the core asks the mode for a new proof for it.
    @Test func aRedirectWithinTheOriginReachesTheResourceWithAProofMadeForIt() async throws {
        try await withEnvironment { environment, backend in
            let client = try client(environment, rules: ["/__redirect", "/dpop/resource"])
            let target = environment.baseURL.appendingPathComponent("dpop/resource").absoluteString
            var components = URLComponents(url: environment.baseURL.appendingPathComponent("__redirect"), resolvingAgainstBaseURL: false)!
            components.queryItems = [URLQueryItem(name: "to", value: target), URLQueryItem(name: "status", value: "307")]
            let response = try await client.send(OutgoingRequest(method: "GET", url: try #require(components.url)))
            #expect(response.statusCode == 200)
            let hops = await backend.records().filter { $0.path == "/__redirect" || $0.path == "/dpop/resource" }
            #expect(hops.map(\.path) == ["/__redirect", "/dpop/resource"])
            #expect(hops.allSatisfy { $0.headerNames.filter { $0 == "dpop" }.count == 1 })
        }
    }

    @Test func aLogoutMakesTheNextRequestFetchANewTokenBoundToTheSameKey() async throws {
        try await withEnvironment { environment, backend in
            let signer = P256DPoPSigner()
            let client = try client(environment, rules: ["/dpop/resource"], signer: signer)
            let resource = OutgoingRequest(method: "GET", url: environment.baseURL.appendingPathComponent("dpop/resource"))
            let first = try await client.send(resource)
            try await client.identityDidChange()
            let second = try await client.send(resource)
            #expect(first.statusCode == 200)
            #expect(second.statusCode == 200)
            let tokenGrants = await backend.records().filter { $0.path == "/dpop/token" }
            // Each token: one request refused for the nonce (the first only), one granted.
            #expect(tokenGrants.count == 3)
            let jkts = [first, second].map { (try? JSONSerialization.jsonObject(with: $0.body) as? [String: Any])?["jkt"] as? String }
            #expect(jkts[0] != nil && jkts[0] == jkts[1])
        }
    }

    private func client(_ environment: SampleEnvironment, rules: [String], signer: any DPoPSigner = P256DPoPSigner()) throws -> AuthorizedHTTPClient {
        let registry = ProviderRegistry()
        registry.register(DPoPAuthorizationMode(signer: signer))
        let base = environment.baseURL.absoluteString.hasSuffix("/") ? String(environment.baseURL.absoluteString.dropLast()) : environment.baseURL.absoluteString
        let text = try String(contentsOf: DPoPModeSample.configurationFile, encoding: .utf8).replacingOccurrences(of: "http://127.0.0.1:8080", with: base)
        let configuration = try AuthorizationConfiguration(data: Data(text.utf8), format: .json, registry: registry)
        var policy = AuthorizationPolicy()
        for path in rules { policy.add(try AuthorizationRule(origin: configuration.baseURL, path: path, scheme: .bearer)) }
        return try AuthorizedHTTPClient(configuration: configuration, policy: policy, registry: registry)
    }
}
