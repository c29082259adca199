// Runs the sample in ../AuthorizationSamples/RefreshCallbackModeSample.swift against the reference backend.
//   swift run --package-path Samples refresh-callback-mode                       (embedded backend on a free port)
//   swift run --package-path Samples refresh-callback-mode --backend-url URL [--api-key KEY] [--project-token TOKEN]
import AuthorizationSamples
import Foundation

let environment = try await SampleEnvironment.fromCommandLine()
let rows = try await RefreshCallbackModeSample.run(environment)
await environment.shutdown()
printReport(rows)
exit(rows.allSatisfy(\.asExpected) ? 0 : 1)
