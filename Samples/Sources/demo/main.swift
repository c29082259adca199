// Runs every finished mode end to end against the reference backend and prints one report.
//   swift run --package-path Samples demo
//   swift run --package-path Samples demo --backend-url http://127.0.0.1:8080 --api-key KEY --project-token TOKEN
// Exits non-zero when any outcome differs from what the sample expects.
import AuthorizationSamples
import Foundation
import GeneratedClientSample

let environment = try await SampleEnvironment.fromCommandLine()
print("SDKAuthorization demo against the reference backend at \(environment.baseURL.absoluteString)")
print("")
var rows: [ReportRow] = []
do {
    rows += try await QuickStartSample.run(environment)
    rows += try await TokenModeSample.run(environment)
    rows += try await CustomerTokenModeSample.run(environment)
    rows += try await RefreshCallbackModeSample.run(environment)
    rows += try await HTTPStackSample.run(environment)
    rows += try await TokenExchangeModeSample.run(environment)
    rows += try await SignatureModeSample.run(environment)
    rows += try await DPoPModeSample.run(environment)
    rows += try await GeneratedClientSample.run(environment)
    rows += MisconfigurationSample.run(environment)
} catch {
    print("demo failed: \(error)")
    await environment.shutdown()
    exit(2)
}
await environment.shutdown()
printReport(rows)
let unexpected = rows.filter { !$0.asExpected }.count
print("")
print(unexpected == 0 ? "All \(rows.count) outcomes as expected." : "\(unexpected) of \(rows.count) outcomes UNEXPECTED.")
exit(unexpected == 0 ? 0 : 1)
