import ArgumentParser

/// The options `updates` and `max-updates` share: how long, over which activities, on how many connections.
struct UpdateLoadOptions: ParsableArguments {
    @Option(help: "Seconds measured.")
    var seconds = 10.0

    @Option(help: "Seconds of warm-up before, not counted.")
    var warmUp = 2.0

    @Option(help: "Activities registered by `activities` to spread the updates over (bench-activity-0…).")
    var activities = 1_000

    @Option(help: "Connections (open loop: a request due while all are busy waits for one, and its wait counts).")
    var connections = 64
}
