// Runs the sample in ../AuthorizationSamples/SignatureModeSample.swift against the reference backend.
//   swift run --package-path Samples signature-mode                       (embedded backend on a free port)
//   swift run --package-path Samples signature-mode --backend-url URL     (a backend bound to loopback: the sample uses its test routes)
import AuthorizationSamples
import Foundation

let environment = try await SampleEnvironment.fromCommandLine()
let rows = try await SignatureModeSample.run(environment)
await environment.shutdown()
printReport(rows)
exit(rows.allSatisfy(\.asExpected) ? 0 : 1)
