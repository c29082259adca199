// Times the bearer-token header check: the framework's HeaderFieldRules (compiled in beside this
// file) against the check it replaced, which walked Unicode general categories. Run by
// Scripts/measure-header-check; prints the median of 7 rounds of 200 x 1,000 distinct tokens.
import Dispatch
import Foundation

/// The check before issue 8 (HeaderCredential.check), kept here only as the baseline.
enum UnicodeCategoryCheck {
    static func isValid(_ credential: String) -> Bool {
        if credential.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) { return false }
        return !credential.allSatisfy(\.isWhitespace)
    }
}

func base64URL(_ text: String) -> String {
    Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
}

let token = base64URL(#"{"alg":"RS256","typ":"JWT","kid":"k1"}"#) + "."
    + base64URL(#"{"sub":"user-42","iss":"https://app.example","aud":"api","exp":1900000000,"iat":1800000000,"scope":"inbox read write"}"#)
    + "." + String(repeating: "S", count: 342)
let tokens = (0..<1_000).map { token + String($0) }
let rounds = 200

func measure(_ name: String, _ check: (String) -> Bool) -> Double {
    var samples: [Double] = []
    for _ in 0..<7 {
        let start = DispatchTime.now().uptimeNanoseconds
        var valid = 0
        for _ in 0..<rounds { for token in tokens where check(token) { valid += 1 } }
        samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / Double(rounds * tokens.count))
        precondition(valid == rounds * tokens.count)
    }
    samples.sort()
    print("\(name): median \(String(format: "%.0f", samples[3])) ns per check (min \(String(format: "%.0f", samples[0])), max \(String(format: "%.0f", samples[6])))")
    return samples[3]
}

print("bearer token of \(token.utf8.count + 3) bytes")
let before = measure("before, Unicode general categories") { UnicodeCategoryCheck.isValid($0) }
let after = measure("after, HeaderFieldRules.checkBearer byte scan") { HeaderFieldRules.checkBearer($0) == .valid }
print("after / before = \(String(format: "%.3f", after / before))")
