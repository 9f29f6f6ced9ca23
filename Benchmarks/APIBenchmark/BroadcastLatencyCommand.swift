import ArgumentParser
import NIOCore

/// `broadcast-latency`: how soon a channel feed's update is on the wire after its 202.
struct BroadcastLatencyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "broadcast-latency",
        abstract: "Post channel feeds' updates one at a time and time each from its 202 to its broadcast answered by the emulator.",
        discussion: """
            Creates --feeds feeds, each with a No Storage channel at the emulator, waits until no push reaches the \
            emulator for a second, then posts --count updates (after --warm-up ones not counted) at --rate a second, \
            round the feeds so that no feed gets two in one second (which the server would coalesce and hold to the \
            next second). After each 202 the emulator's count of answered requests is polled every 100 µs until the \
            broadcast is counted. Prints `broadcast count=N feeds=F p50_ms=… p99_ms=… max_ms=… coalesced=C errors=E`.
            """
    )

    @OptionGroup var stack: StackOptions

    @Option(help: "Updates measured.")
    var count = 200

    @Option(help: "Updates sent a second.")
    var rate = 20.0

    @Option(help: "Feeds with a channel, taken in turn.")
    var feeds = 40

    @Option(help: "Updates sent first and not counted (serve's first pushes open its APNs connection).")
    var warmUp = 10

    func validate() throws {
        guard Double(self.feeds) >= 2 * self.rate else {
            throw ValidationError("--feeds must be at least twice --rate, so no feed gets two updates in a second")
        }
    }

    func run() async throws {
        try await BenchmarkStack.run(self.stack, connections: 1) { stack in
            let run = BenchmarkStack.runTag()
            for index in 0..<self.feeds {
                let answer = try await stack.client.send(stack.feed(BenchmarkStack.channelFeedKey(index, run: run), channel: true))
                guard answer.isSuccess else { throw BenchmarkFailure("creating a channel feed answered \(answer.description)") }
            }
            let wire = WireWatch(emulator: stack.emulator)
            try await wire.waitForQuiet()
            var result = LoadResult()
            var coalesced = 0
            let start = NIODeadline.now()
            for index in 0..<(self.warmUp + self.count) {
                let due = start + .nanoseconds(Int64(Double(index) * 1e9 / self.rate))
                if due > .now() { try await Task.sleep(for: Duration(due - .now())) }
                let before = wire.answered
                let answer = try await stack.client.send(stack.feedUpdate(BenchmarkStack.channelFeedKey(index % self.feeds, run: run), index: index))
                guard answer.isSuccess else {
                    result.recordError(answer.description)
                    continue
                }
                if answer.body.contains(#""coalesced":true"#) { coalesced += 1 }
                guard let onTheWire = try await wire.waitUntil(answered: before + 1, timeout: .seconds(30)) else {
                    result.recordError("no broadcast reached the emulator within 30 s of the 202")
                    continue
                }
                if index >= self.warmUp { result.recordSuccess(from: answer.receivedAt, to: onTheWire) }
            }
            Summary.print(
                "broadcast",
                [("count", String(result.succeeded)), ("feeds", String(self.feeds))] + result.percentileFields([50, 99])
                    + [("coalesced", String(coalesced))],
                errors: result.errors,
                firstError: result.firstError
            )
        }
    }
}
