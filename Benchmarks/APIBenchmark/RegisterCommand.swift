import ArgumentParser

/// `register`: push-to-start token registrations of new devices, closed loop, for the highest rate the server
/// answers (as wrk measures).
struct RegisterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "register",
        abstract: "Register push-to-start tokens of new devices as fast as the connections get answers.",
        discussion: "Prints `register connections=C requests=N rate=R p50_ms=… p99_ms=… max_ms=… errors=E`."
    )

    @OptionGroup var stack: StackOptions

    @Option(help: "Connections, each with one request in flight.")
    var connections = 16

    @Option(help: "Seconds of load.")
    var seconds = 10.0

    func run() async throws {
        try await BenchmarkStack.run(self.stack, connections: self.connections) { stack in
            let run = BenchmarkStack.runTag()
            let result = try await stack.client.closedLoop(duration: .seconds(self.seconds)) { stack.registration(run: run, index: $0) }
            Summary.print("register", [("connections", String(self.connections))], result, percentiles: [50, 99])
        }
    }
}
