// Runs the sample in ../AuthorizationSamples/DPoPModeSample.swift against the reference backend: proof-of-
// possession tokens (RFC 9449 DPoP), a mode written outside the framework (Samples/DPoPMode, a package
// of its own), chosen by name from dpop-authorization.json and registered at build time.
//   swift run --package-path Samples dpop-mode                       (embedded backend on a free port)
//   swift run --package-path Samples dpop-mode --backend-url URL
import AuthorizationSamples
import Foundation

let environment = try await SampleEnvironment.fromCommandLine()
let rows = try await DPoPModeSample.run(environment)
await environment.shutdown()
printReport(rows)
exit(rows.allSatisfy(\.asExpected) ? 0 : 1)
