import Foundation
import Testing
import TestSupport
@testable import SDKAuthorizationSignature

@Suite("Signature mode: parsing Retry-After", .hangLimit)
struct SignatureQueueRetryAfterParsingTests {
    let now = Date(timeIntervalSince1970: 1_767_225_600)   // Thu, 01 Jan 2026 00:00:00 GMT

    @Test func deltaSecondsAndTheThreeHTTPDateFormatsAreRead() {
        #expect(RetryAfter.seconds(in: "120", now: now) == 120)
        #expect(RetryAfter.seconds(in: " 7 ", now: now) == 7)
        #expect(RetryAfter.seconds(in: "Thu, 01 Jan 2026 01:00:00 GMT", now: now) == 3_600)
        #expect(RetryAfter.seconds(in: "Sun, 06 Nov 1994 08:49:37 GMT", now: Date(timeIntervalSince1970: 784_111_777)) == 0)
        #expect(RetryAfter.seconds(in: "Sunday, 06-Nov-94 08:49:37 GMT", now: Date(timeIntervalSince1970: 784_111_777)) == 0)
        #expect(RetryAfter.seconds(in: "Sun Nov  6 08:49:37 1994", now: Date(timeIntervalSince1970: 784_111_777)) == 0)
        #expect(RetryAfter.seconds(in: "Sat, 29 Feb 2028 00:00:00 GMT", now: now) == 68_169_600, "a leap day")
        #expect(RetryAfter.seconds(in: "Wed, 31 Dec 2025 23:59:00 GMT", now: now) == 0, "a date past is no wait")
    }

    @Test func hugeValuesAreBoundedWithoutTrapping() {
        let huge = RetryAfter.seconds(in: String(repeating: "9", count: 200), now: now)
        #expect(huge != nil && huge! >= 1e12 && huge!.isFinite)
        #expect(RetryAfter.seconds(in: "Fri, 31 Dec 9999 23:59:59 GMT", now: now).map { $0 > 1e11 } == true)
        #expect(RetryAfter.seconds(in: String(repeating: "1", count: 100_000), now: now) == nil, "a field longer than any date or number is not read")
    }

    @Test func malformedValuesAreNil() {
        for value in ["", "soon", "-1", "+1", "1.5", "1e3", "0x10", "١٢", "Thu, 29 Feb 2026 00:00:00 GMT", "Thu, 01 Jan 2026 00:60:00 GMT",
                      "Thu, 01 Jan 26 00:00:00 GMT", "Thu,01 Jan 2026 00:00:00 GMT", "Thu, 01 Jan 2026 00:00:00", "Thu, 1 Jan 2026 0:00:00 GMT"] {
            #expect(RetryAfter.seconds(in: value, now: now) == nil, "\(value)")
        }
    }
}
