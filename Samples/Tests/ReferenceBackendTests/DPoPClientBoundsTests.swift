import Foundation
@testable import ReferenceBackend
import Testing

/// `/dpop/token` does not authenticate its clients (client_credentials with a `client_id` only), so
/// whoever knows one client's ID can send proof after proof and ask for token after token: each
/// client's replay cache and issued tokens are bounded on their own, so that one client (or whoever
/// knows its ID) fills only its own part and never refuses or evicts another client's.
@Suite("Reference backend DPoP: bounds per client", .timeLimit(.minutes(3)))
struct DPoPClientBoundsTests {
    private let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aClientThatFillsItsReplayCacheLeavesAnotherClientsProofsAdmitted() {
        let cache = DPoPReplayCache(capacity: 3)
        for index in 0..<3 { #expect(cache.admit("jti-\(index)", client: "attacker-knows-this-id", now: now) == .admitted) }
        #expect(cache.admit("jti-3", client: "attacker-knows-this-id", now: now) == .full)
        // Another client's proofs, even with the same jti values, are its own.
        #expect(cache.admit("jti-0", client: "other-client", now: now) == .admitted)
        #expect(cache.admit("jti-new", client: "other-client", now: now) == .admitted)
        #expect(cache.admit("jti-0", client: "other-client", now: now) == .replayed)
    }

    @Test func aFullClientsPartAdmitsAgainOnceItsEntriesExpire() {
        let cache = DPoPReplayCache(capacity: 2)
        #expect(cache.admit("a", client: "c", now: now) == .admitted)
        #expect(cache.admit("b", client: "c", now: now) == .admitted)
        #expect(cache.admit("x", client: "c", now: now) == .full)
        let later = now.addingTimeInterval(2 * ReferenceBackend.dpopProofClockSkew + 1)
        #expect(cache.admit("x", client: "c", now: later) == .admitted)
    }

    @Test func aClientThatAsksForTokenAfterTokenEvictsOnlyItsOwn() {
        let ledger = DPoPTokenLedger(capacity: 3)
        let kept = ledger.issue(subject: "other-client", jkt: "k", lifetime: 600, now: now)
        var flood: [String] = []
        for _ in 0..<10 { flood.append(ledger.issue(subject: "attacker-knows-this-id", jkt: "k", lifetime: 600, now: now)) }
        guard case .valid(let entry) = ledger.look(kept, now: now) else {
            Issue.record("another client's token was evicted by the flood")
            return
        }
        #expect(entry.subject == "other-client")
        // The flooding client keeps at most its capacity: its oldest are gone, its newest valid.
        let valid = flood.filter { if case .valid = ledger.look($0, now: now) { true } else { false } }
        #expect(valid.count == 3)
        if case .valid = ledger.look(flood[9], now: now) {} else { Issue.record("the newest token was not kept") }
    }
}
