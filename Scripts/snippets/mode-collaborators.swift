// What the prose around the mode registration block names: the app's server, which signs payloads,
// and its session, which renews the ID token.
import SDKAuthorizationTokenExchange

struct YourServer: Sendable {
    func sign(_ payload: SigningPayload) async throws -> String { "signed.jwt.payload" }
}

struct YourSession: Sendable {
    func renewIDToken() async {}
}

let server = YourServer()
let session = YourSession()
