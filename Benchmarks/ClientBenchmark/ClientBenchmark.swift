import APNs
import ArgumentParser
import Foundation
import LivecastCore
import NIOCore
import NIOPosix

/// Pushes as fast as the APNs client can to one server and prints the rate: the client half of
/// `scripts/bench.sh`, which runs `h2load` against the same server beside it.
@main
struct ClientBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "livecast-client-benchmark",
        abstract: "Send device pushes through Livecast's APNs client and print pushes per second."
    )

    @Option(help: "The server, https://HOST:PORT.")
    var url: String

    @Option(help: "A PEM file of certificates to trust.")
    var ca: String?

    @Option(help: "A .p8 key to sign provider tokens with.")
    var key: String

    @Option(help: "The device token in the path.")
    var token: String

    @Option(help: "The payload file.")
    var payload: String

    @Option(help: "Connections in the pool.")
    var connections = 1

    @Option(help: "Pushes to send (after a warm-up of 1,000).")
    var requests = 200_000

    @Option(help: "Pushes per batch handed to the client.")
    var batch = 2_000

    @Option(help: "Batches in flight at once.")
    var inFlight = 4

    @Option(help: "Event-loop threads for the client (default: one per core).")
    var threads: Int?

    func run() async throws {
        guard let endpoint = APNsClient.Endpoint(url: self.url) else { throw ValidationError("--url must be https://HOST:PORT") }
        guard let payload = FileManager.default.contents(atPath: self.payload) else { throw ValidationError("cannot read --payload") }
        var configuration = APNsClient.Configuration(environment: .sandbox)
        configuration.pushEndpoint = endpoint
        configuration.broadcastEndpoint = endpoint
        configuration.additionalTrustRootFiles = self.ca.map { [$0] } ?? []
        configuration.connectionsPerEndpoint = self.connections
        configuration.requestTimeout = .seconds(60)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: self.threads ?? ProcessInfo.processInfo.activeProcessorCount)
        let client = try APNsClient(
            configuration: configuration,
            credentials: try APNsCredentials(teamID: "BENCHTEAM1", keyID: "BENCHKEY01", p8File: self.key),
            eventLoopGroup: group
        )
        let push = DevicePush(deviceToken: self.token, bundleID: "com.example.bench", payload: Array(payload), priority: .consideringDevicePower)
        let warmUp = await client.send(Array(repeating: push, count: 1_000))
        guard warmUp.allSatisfy({ $0.isSuccess }) else {
            throw ValidationError("warm-up failed: \(warmUp.first { !$0.isSuccess }!)")
        }
        let batch = Array(repeating: push, count: self.batch)
        let batches = (self.requests + self.batch - 1) / self.batch
        let clock = ContinuousClock()
        let start = clock.now
        let failures = await withTaskGroup(of: Int.self) { group in
            var next = 0
            var failures = 0
            while next < min(self.inFlight, batches) {
                group.addTask { await client.send(batch).filter { !$0.isSuccess }.count }
                next += 1
            }
            for await failed in group {
                failures += failed
                if next < batches {
                    group.addTask { await client.send(batch).filter { !$0.isSuccess }.count }
                    next += 1
                }
            }
            return failures
        }
        let elapsed = clock.now - start
        await client.shutdown()
        try await group.shutdownGracefully()
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let sent = batches * self.batch
        print(
            "connections=\(self.connections) requests=\(sent) seconds=\(String(format: "%.3f", seconds)) rate=\(Int(Double(sent) / seconds)) failures=\(failures)"
        )
    }
}
