import ArgumentParser

/// `max-updates`: the highest rate of accepted activity updates, closed loop over many connections.
struct MaxUpdatesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "max-updates",
        abstract: "Post activity updates back to back on many connections and report the accepted (202) rate sustained.",
        discussion: """
            Updates go round the activities `activities` registered. A warm-up comes first and is not counted. \
            Prints `max-updates connections=C [priority=P] [keyed=true] requests=N rate=R p50_ms=… p99_ms=… max_ms=… errors=E`.
            """
    )

    @OptionGroup var stack: StackOptions
    @OptionGroup var load: UpdateLoadOptions

    func run() async throws {
        try await BenchmarkStack.run(self.stack, connections: self.load.connections) { stack in
            let (activities, priority, keyed) = (self.load.activities, self.load.priority, self.load.idempotencyKeys)
            _ = try await stack.client.closedLoop(duration: .seconds(self.load.warmUp)) {
                stack.activityUpdate(index: $0, activities: activities, priority: priority, keyed: keyed)
            }
            let result = try await stack.client.closedLoop(duration: .seconds(self.load.seconds)) {
                stack.activityUpdate(index: $0, activities: activities, priority: priority, keyed: keyed)
            }
            Summary.print("max-updates", [("connections", String(self.load.connections))] + self.load.summaryFields, result, percentiles: [50, 99])
        }
    }
}
