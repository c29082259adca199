/// A user ID as a key: compared and hashed by its exact UTF-8 bytes, with no Unicode normalization.
///
/// Swift's `String` equality treats canonically equivalent strings as equal (`"jos\u{E9}"` and
/// `"jose\u{301}"`, NFC and NFD), but servers compare user IDs as bytes: two such IDs are two users,
/// each with a signature, a queue lane and requests of their own.
struct UserKey: Hashable, Sendable {
    let userId: String

    init(_ userId: String) {
        self.userId = userId
    }

    static func == (lhs: UserKey, rhs: UserKey) -> Bool {
        lhs.userId.utf8.elementsEqual(rhs.userId.utf8)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(userId.utf8.count)
        for byte in userId.utf8 { hasher.combine(byte) }
    }
}

extension QueuedEntry {
    /// The entry's lane: its user, compared as exact bytes (`nil`: the anonymous lane).
    var lane: UserKey? { userId.map(UserKey.init) }
}
