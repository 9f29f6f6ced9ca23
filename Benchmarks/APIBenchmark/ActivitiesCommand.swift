import ArgumentParser

/// `activities`: registers the standalone activities that `updates` and `max-updates` update.
struct ActivitiesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "activities",
        abstract: "Register standalone activities bench-activity-0… with their update tokens (again: unchanged).",
        discussion: "Prints `activities count=N requests=N rate=R p50_ms=… p99_ms=… max_ms=… errors=E`."
    )

    @OptionGroup var stack: StackOptions

    @Option(help: "Activities to register.")
    var count = 1_000

    @Option(help: "Connections, each with one request in flight.")
    var connections = 16

    func run() async throws {
        try await BenchmarkStack.run(self.stack, connections: self.connections) { stack in
            let result = try await stack.client.closedLoop(requests: self.count) { stack.activityRegistration(index: $0) }
            Summary.print("activities", [("count", String(self.count))], result, percentiles: [50, 99])
        }
    }
}
