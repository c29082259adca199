/// "Did you mean": the candidate closest to a misspelt name (the same but for case, or at most
/// two (`limit`) letters inserted, removed or changed), with bounded work whatever the input holds.
///
/// A file may name thousands of unknown keys and a registry may hold thousands of keys (a mode
/// description of 1 MiB): the work is capped, not quadratic. Per name, at most 2,048
/// (`maximumCandidates`) candidates of a near length are compared, each with a distance banded to `limit` (at most
/// `(2 × limit + 1) × maximumLength` cells); an error hints at most ``maximumNames`` names. ``work``
/// counts what was done, so a test bounds it by counting, not timing.
///
/// The registry's hints use it (``ProviderRegistry/hint(forUnresolvedName:otherNames:otherModes:modeSettings:)``),
/// as do a configuration reader's "did you mean" for an unknown key and the authorization doctor's
/// for a misspelt class name.
///
/// ```swift
/// var nearest = NearestName(candidates: ["tokenExchangeURL", "signatureAuthenticationEnabled"])
/// nearest.nearest(to: "tokenExchangeUrl")   // "tokenExchangeURL"
/// ```
public struct NearestName: Sendable {
    /// The most candidates compared with one name: those of a near length, in sorted order.
    static let maximumCandidates = 2_048
    /// The most names one error gives a hint for (the caller stops asking after that).
    public static let maximumNames = 8
    /// Names longer than this, in Unicode scalars, are matched by case only.
    static let maximumLength = 64
    /// The largest distance suggested.
    static let limit = 2

    /// The candidates, sorted and without repeats, each lowercased.
    private let candidates: [(name: String, lowered: [Unicode.Scalar])]
    /// The steps taken: candidates looked at and distance cells computed.
    public private(set) var work = 0

    /// Looks among `candidates` (sorted here, once).
    public init(candidates: some Sequence<String>) {
        self.candidates = Set(candidates).sorted().map { ($0, Array($0.lowercased().unicodeScalars)) }
    }

    /// The candidate closest to `name` (the first in sorted order among equals), or nil when none
    /// is within two letters; never `name` itself.
    public mutating func nearest(to name: String) -> String? {
        let lowered = Array(name.lowercased().unicodeScalars)
        var best: (name: String, distance: Int)?
        var compared = 0
        for candidate in candidates {
            work += 1
            guard candidate.name != name, abs(candidate.lowered.count - lowered.count) <= Self.limit else { continue }
            compared += 1
            if compared > Self.maximumCandidates { break }
            let distance: Int?
            if candidate.lowered.count > Self.maximumLength || lowered.count > Self.maximumLength {
                work += min(candidate.lowered.count, lowered.count)
                distance = candidate.lowered == lowered ? 0 : nil
            } else {
                distance = Self.distance(lowered, candidate.lowered, limit: Self.limit, work: &work)
            }
            guard let distance else { continue }
            if best == nil || distance < best!.distance { best = (candidate.name, distance) }
            if distance == 0 { break }
        }
        return best?.name
    }

    /// The Levenshtein distance between `a` and `b` when it is at most `limit`, else nil; only the
    /// band of cells within `limit` of the diagonal is computed (each adds one to `work`), and the
    /// computation stops once a whole row is past `limit`.
    static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar], limit: Int, work: inout Int) -> Int? {
        guard abs(a.count - b.count) <= limit else { return nil }
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        let outside = limit + 1
        var previous = (0...b.count).map { min($0, outside) }
        var current = Array(repeating: outside, count: b.count + 1)
        for i in 1...a.count {
            let low = max(1, i - limit), high = min(b.count, i + limit)
            current[0] = i <= limit ? i : outside
            if low > 1 { current[low - 1] = outside }
            var rowMinimum = current[0]
            if low <= high {
                for j in low...high {
                    work += 1
                    let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                    current[j] = min(min(previous[j] + 1, current[j - 1] + 1), min(substitution, outside))
                    rowMinimum = min(rowMinimum, current[j])
                }
            }
            if high < b.count { current[high + 1] = outside }
            guard rowMinimum <= limit else { return nil }
            swap(&previous, &current)
        }
        return previous[b.count] <= limit ? previous[b.count] : nil
    }
}
