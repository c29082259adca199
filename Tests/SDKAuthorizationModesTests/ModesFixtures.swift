import Dispatch
import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationSignature

// Fixtures the tests across modes share with one mode's tests (copied, as test targets do not
// depend on each other): the Keychain double of the store tests, and the signature mode's client.

/// A keychain in memory: items by key, every call answered with an `OSStatus` as `SecItem*` would.
final class MemoryKeychain: KeychainItems, Sendable {
    struct Call: Sendable, Equatable {
        let name: String
        let status: Int32
    }

    private struct State {
        var items: [KeychainItemKey: Data] = [:]
        var calls: [Call] = []
        /// Updates still to hold until this many have arrived (a race of first saves).
        var updatesToGather = 0
        var gathered = 0
    }

    private let state = Locked(State())
    private let everyCall: Int32?
    private let gate = DispatchSemaphore(value: 0)

    /// A keychain that answers every call with `everyCall` when given (a missing entitlement, say).
    init(everyCall: Int32? = nil) {
        self.everyCall = everyCall
    }

    var calls: [Call] { state.withLock { $0.calls } }
    var items: [KeychainItemKey: Data] { state.withLock { $0.items } }

    /// Holds the next `count` updates until all of them have arrived: each sees the keychain as the
    /// others saw it.
    func gatherUpdates(_ count: Int) {
        state.withLock { $0.updatesToGather = count }
    }

    func plant(_ data: Data, at key: KeychainItemKey) {
        state.withLock { $0.items[key] = data }
    }

    func add(_ key: KeychainItemKey, data: Data) -> Int32 {
        state.withLock { state in
            let status = everyCall ?? (state.items[key] == nil ? KeychainStatus.success : KeychainStatus.duplicateItem)
            if status == KeychainStatus.success { state.items[key] = data }
            state.calls.append(Call(name: "add", status: status))
            return status
        }
    }

    func update(_ key: KeychainItemKey, data: Data) -> Int32 {
        let (status, releases) = state.withLock { state -> (Int32, Int) in
            let status = everyCall ?? (state.items[key] == nil ? KeychainStatus.itemNotFound : KeychainStatus.success)
            if status == KeychainStatus.success { state.items[key] = data }
            state.calls.append(Call(name: "update", status: status))
            guard state.updatesToGather > 0 else { return (status, -1) }
            state.gathered += 1
            guard state.gathered == state.updatesToGather else { return (status, 0) }
            state.updatesToGather = 0
            return (status, state.gathered - 1)
        }
        switch releases {
        case -1: break
        case 0: gate.wait()          // the last of the gathered updates lets this one go
        default: for _ in 0..<releases { gate.signal() }
        }
        return status
    }

    func copy(_ key: KeychainItemKey) -> (status: Int32, data: Data?) {
        state.withLock { state in
            let data = state.items[key]
            let status = everyCall ?? (data == nil ? KeychainStatus.itemNotFound : KeychainStatus.success)
            state.calls.append(Call(name: "copy", status: status))
            return (status, status == KeychainStatus.success ? data : nil)
        }
    }

    func delete(_ key: KeychainItemKey) -> Int32 {
        state.withLock { state in
            let status = everyCall ?? (state.items.removeValue(forKey: key) == nil ? KeychainStatus.itemNotFound : KeychainStatus.success)
            state.calls.append(Call(name: "delete", status: status))
            return status
        }
    }
}

/// A signature as the app's server would make it: RS256-shaped, `sub` = the user.
func signature(_ user: String, _ serial: Int = 1) -> String {
    makeJWT(["sub": user, "exp": 1_900_000_000 + serial, "aud": "braze"])
}

/// A Braze-style rejection: 401 with `auth_error`.
func authErrorResponse(_ code: Int, user: String? = nil, optional: Bool = false, status: Int = 401) -> ServerResponse {
    let userPart = user.map { #","user_id":"\#($0)""# } ?? ""
    let optionalPart = optional ? #","optional":true"# : ""
    return ServerResponse(statusCode: status, body: Data(#"{"auth_error":{"error_code":\#(code),"reason":"code \#(code)"\#(optionalPart)}\#(userPart)}"#.utf8))
}

/// A client that gives every request to sdk.example.com the signature scheme.
func signatureClient(_ authentication: SignatureAuthentication, transport: RecordingTransport, diagnostics: any DiagnosticsSink = RecordingDiagnosticsSink()) throws -> AuthorizedHTTPClient {
    var policy = AuthorizationPolicy()
    policy.add(try AuthorizationRule(host: "sdk.example.com", path: "/**", scheme: .signature))
    let authorizer = try RequestAuthorizer(policy: policy, providers: [.signature: authentication], diagnostics: diagnostics)
    return AuthorizedHTTPClient(authorizer: authorizer, transport: transport)
}

let dataURL = URL(string: "https://sdk.example.com/api/v3/data")!
