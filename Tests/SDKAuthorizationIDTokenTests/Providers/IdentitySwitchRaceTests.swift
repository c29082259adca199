import Dispatch
import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit
@testable import SDKAuthorizationIDToken

/// Holds the first switch inside its reset, where it reports the refresh it cleared, until the test
/// lets it go: another switch can then overtake it at exactly that point.
final class HoldingSwitchObserver: AuthorizationEventObserver, Sendable {
    let held = DispatchSemaphore(value: 0)
    let released = DispatchSemaphore(value: 0)
    private let armed = Locked(true)

    func observe(_ event: AuthorizationEvent) {
        guard event.kind == .refreshFinished, event.outcome == .cleared,
              armed.withLock({ armed in defer { armed = false }; return armed }) else { return }
        held.signal()
        released.wait()
    }
}

/// Lingers a moment in every switch that clears a refresh, so that other switches get to run
/// inside it: the window the race needs, made wide.
final class LingeringSwitchObserver: AuthorizationEventObserver, Sendable {
    func observe(_ event: AuthorizationEvent) {
        guard event.kind == .refreshFinished, event.outcome == .cleared else { return }
        usleep(200)
    }
}

/// Waits on a semaphore off the cooperative pool.
private func waitOffPool(_ semaphore: DispatchSemaphore) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        DispatchQueue.global().async {
            semaphore.wait()
            continuation.resume()
        }
    }
}

@Suite("IDTokenStore identity switches that race", .hangLimit)
struct IdentitySwitchRaceTests {
    let clock = ManualClock()
    let sink = RecordingDiagnosticsSink()
    let context = AuthorizationContext(endpoint: "ticketing", url: URL(string: "https://api.example.com/ticketing")!)

    @Test func aSwitchOvertakenByAnotherInstallsNothing() async throws {
        let saved = MemoryCredentialStore()
        try saved.save(StoredCredential(token: "token-of-alice", expiresAt: nil), identity: "alice", kind: .idTokenOfAPI)
        let observer = HoldingSwitchObserver()
        let idTokens = try IDTokenStore(authorizedDomains: ["api.example.com"], clock: clock, diagnostics: sink, observer: observer,
                                        credentialStore: saved, credentialIdentity: "carol")
        idTokens.registerRefreshCallback {}
        // A refresh runs, so the switch to alice has one to clear (and reports it to the observer).
        let waiting = Task { [context] in try await idTokens.credential(for: context) }
        await eventually("a request waits", { idTokens.waitingRequestCount == 1 })

        let aliceDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            try? idTokens.switchIdentity(to: "alice")
            aliceDone.signal()
        }
        // The switch to alice has reset (identity alice) and is held before it loads alice's token.
        await waitOffPool(observer.held)
        try idTokens.switchIdentity(to: "bob")
        observer.released.signal()
        await waitOffPool(aliceDone)

        #expect(idTokens.credentialIdentity == "bob")
        #expect(idTokens.currentToken == nil, "bob has nothing stored; alice's token must not serve him")
        await #expect(throws: RequestError.credentialCleared(endpoint: "ticketing")) { try await waiting.value }
    }

    @Test func manyConcurrentSwitchesAndLoadsNeverLeaveAnotherUsersToken() async throws {
        let users = (0..<6).map { "user-\($0)" }
        let saved = MemoryCredentialStore()
        // Every other user has a stored token; the others have none.
        for user in users.enumerated() where user.offset.isMultiple(of: 2) {
            try saved.save(StoredCredential(token: "token-of-\(user.element)", expiresAt: nil), identity: user.element, kind: .idTokenOfAPI)
        }
        let idTokens = try IDTokenStore(authorizedDomains: ["api.example.com"], clock: clock, diagnostics: sink,
                                        observer: LingeringSwitchObserver(), credentialStore: saved, credentialIdentity: users[1])
        idTokens.registerRefreshCallback {}
        for round in 0..<300 {
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<4 {
                    let user = users[(round * 5 + index * 7) % users.count]
                    group.addTask { try? idTokens.switchIdentity(to: user) }
                }
                let requests = Task {
                    await withTaskGroup(of: Void.self) { requests in
                        for _ in 0..<4 { requests.addTask { [context] in _ = try? await idTokens.credential(for: context) } }
                    }
                }
                await group.waitForAll()
                // Requests still waiting for a refresh that never comes are let go.
                requests.cancel()
                await requests.value
            }
            let identity = try #require(idTokens.credentialIdentity)
            let expected = try saved.load(identity: identity, kind: .idTokenOfAPI)?.token
            #expect(idTokens.currentToken == expected, "round \(round): identity \(identity) holds \(idTokens.currentToken ?? "nothing")")
            if let expected {
                #expect(try await idTokens.credential(for: context) == .bearer(expected))
            }
            if idTokens.currentToken != expected { break }
        }
    }
}
