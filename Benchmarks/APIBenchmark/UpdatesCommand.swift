import ArgumentParser

/// `updates`: update latency at a fixed offered rate, open loop, round the activities `activities` registered.
struct UpdatesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "updates",
        abstract: "Post activity updates at a fixed rate, open loop, and measure each from its intended send time to its 202.",
        discussion: """
            Update i goes to bench-activity-(i mod --activities), so each activity gets --rate / --activities updates \
            a second (the server coalesces one activity's updates within a second: they are still accepted). A warm-up \
            at the same rate comes first and is not counted. Prints `updates offered=R [priority=P] [keyed=true] requests=N rate=ACHIEVED \
            p50_ms=… p99_ms=… p999_ms=… max_ms=… errors=E`.
            """
    )

    @OptionGroup var stack: StackOptions
    @OptionGroup var load: UpdateLoadOptions

    @Option(help: "Updates offered a second.")
    var rate = 1_000.0

    func run() async throws {
        try await BenchmarkStack.run(self.stack, connections: self.load.connections) { stack in
            let (activities, priority, keyed) = (self.load.activities, self.load.priority, self.load.idempotencyKeys)
            _ = try await stack.client.openLoop(rate: self.rate, duration: .seconds(self.load.warmUp)) {
                stack.activityUpdate(index: $0, activities: activities, priority: priority, keyed: keyed)
            }
            let result = try await stack.client.openLoop(rate: self.rate, duration: .seconds(self.load.seconds)) {
                stack.activityUpdate(index: $0, activities: activities, priority: priority, keyed: keyed)
            }
            Summary.print("updates", [("offered", String(Int(self.rate)))] + self.load.summaryFields, result)
        }
    }
}
