import ArgumentParser
import Foundation
import NIOCore

/// `fanout-latency`: how soon one feed update reaches every token follower after its 202.
struct FanOutLatencyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout-latency",
        abstract: "Post one update of a feed with N token followers and time it from its 202 to the last follower's push answered.",
        discussion: """
            Creates the feed bench-fanout (no channel) and registers its followers, bench-follower-0…, each with its \
            own update token, through the API; opens serve's APNs connection with one standalone activity's update; \
            waits until no push reaches the emulator for a second; then posts the feed's update and polls the \
            emulator's count of answered requests every 100 µs until all the followers' pushes are counted. Prints \
            `fanout followers=N first_ms=… last_ms=… pushes_per_s=… errors=E` (from the 202 to the first and the \
            last push; pushes_per_s is followers / last_ms).
            """
    )

    @OptionGroup var stack: StackOptions

    @Option(help: "Token followers of the feed.")
    var followers = 10_000

    @Option(help: "Connections used to register the followers.")
    var connections = 16

    @Option(help: "Seconds to wait for the last push.")
    var timeout = 600.0

    func run() async throws {
        try await BenchmarkStack.run(self.stack, connections: self.connections) { stack in
            let wire = WireWatch(emulator: stack.emulator)
            try await Self.expectSuccess(stack.client.send(stack.feed(BenchmarkStack.fanOutFeedKey, channel: false)), "creating the feed")
            let registered = try await stack.client.closedLoop(requests: self.followers) { stack.follower(index: $0) }
            guard registered.errors == 0 else { throw BenchmarkFailure("registering followers: \(registered.firstError ?? "")") }
            try await Self.expectSuccess(stack.client.send(stack.warmUpActivity()), "registering the warm-up activity")
            let beforeWarmUp = wire.answered
            try await Self.expectSuccess(stack.client.send(stack.warmUpUpdate()), "the warm-up update")
            guard try await wire.waitUntil(answered: beforeWarmUp + 1, timeout: .seconds(30)) != nil else {
                throw BenchmarkFailure("the warm-up push did not reach the emulator")
            }
            try await wire.waitForQuiet()
            let before = wire.answered
            let answer = try await stack.client.send(stack.feedUpdate(BenchmarkStack.fanOutFeedKey, index: 1))
            try Self.expectSuccess(answer, "the feed update")
            let timeout = Duration.seconds(self.timeout)
            guard let first = try await wire.waitUntil(answered: before + 1, timeout: timeout),
                let last = try await wire.waitUntil(answered: before + self.followers, timeout: timeout)
            else {
                throw BenchmarkFailure("\(wire.answered - before) of \(self.followers) pushes reached the emulator within \(self.timeout) s")
            }
            let lastSeconds = Duration(last - answer.receivedAt).inSeconds
            Summary.print(
                "fanout",
                [
                    ("followers", String(self.followers)),
                    ("first_ms", String(format: "%.2f", Duration(first - answer.receivedAt).inSeconds * 1_000)),
                    ("last_ms", String(format: "%.2f", lastSeconds * 1_000)),
                    ("pushes_per_s", String(Int(Double(self.followers) / lastSeconds))),
                ],
                errors: 0,
                firstError: nil
            )
        }
    }

    private static func expectSuccess(_ answer: APIAnswer, _ what: String) throws {
        guard answer.isSuccess else { throw BenchmarkFailure("\(what) answered \(answer.description)") }
    }
}
