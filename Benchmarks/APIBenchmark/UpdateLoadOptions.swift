import ArgumentParser

/// The options `updates` and `max-updates` share: how long, over which activities, on how many connections, at which
/// priority, with idempotency keys or not.
struct UpdateLoadOptions: ParsableArguments {
    @Option(help: "Seconds measured.")
    var seconds = 10.0

    @Option(help: "Seconds of warm-up before, not counted.")
    var warmUp = 2.0

    @Option(help: "Activities registered by `activities` to spread the updates over (bench-activity-0…).")
    var activities = 1_000

    @Option(help: "Connections (open loop: a request due while all are busy waits for one, and its wait counts).")
    var connections = 64

    @Option(help: "The priority every update asks for: 5 or 10 (by default none, and the server sends at 5).")
    var priority: Int?

    @Flag(help: "Send each update with an Idempotency-Key of its own, as a backend that retries safely does.")
    var idempotencyKeys = false

    /// The summary line's `priority=P` and `keyed=true`, for the options given.
    var summaryFields: [(String, String)] {
        (self.priority.map { [("priority", String($0))] } ?? []) + (self.idempotencyKeys ? [("keyed", "true")] : [])
    }

    func validate() throws {
        if let priority, priority != 5 && priority != 10 { throw ValidationError("--priority must be 5 or 10") }
    }
}
