// Runs the sample in ../AuthorizationSamples/TokenExchangeModeSample.swift against the reference backend.
//   swift run --package-path Samples token-exchange-mode                       (embedded backend on a free port)
//   swift run --package-path Samples token-exchange-mode --backend-url URL [--exchange-secret SECRET]
import AuthorizationSamples
import Foundation

let environment = try await SampleEnvironment.fromCommandLine()
let arguments = CommandLine.arguments
let secret = arguments.firstIndex(of: "--exchange-secret").flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
let rows = try await TokenExchangeModeSample.run(environment, exchangeSecret: secret ?? TokenExchangeModeSample.defaultExchangeSecret)
await environment.shutdown()
printReport(rows)
exit(rows.allSatisfy(\.asExpected) ? 0 : 1)
