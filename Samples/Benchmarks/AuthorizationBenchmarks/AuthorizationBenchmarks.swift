// The framework's benchmarks that need no server: request preparation (1), waiters on a stale token
// (3), a blocking synchronous provider (4), the signature mode's durable queue (5). Every figure is a ratio to a floor measured in the same
// process and run; see BENCHMARKS.md at the repository root.
//
//   Scripts/benchmarks                 # everything, release build
//   Scripts/benchmarks --quick         # one small round each: proves they build and run
//   swift package --package-path Samples benchmark --target AuthorizationBenchmarks --filter '1 prepare'
import Benchmark

let benchmarks: @Sendable () -> Void = {
    requestPreparationBenchmarks()
    refreshWaiterBenchmarks()
    blockingProviderBenchmarks()
    durableQueueBenchmarks()
}
