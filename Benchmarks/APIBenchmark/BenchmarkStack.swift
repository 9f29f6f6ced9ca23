import APNsEmulator
import FoundationEssentials
import NIOCore
import NIOPosix

/// What a mode runs against: the APNs emulator in this process (accepting any device token, so a push's answer is
/// seen the moment it is counted), `livecast serve` pointed at it, and a client with connections to the API.
struct BenchmarkStack: Sendable {
    /// The in-process emulator that serve's pushes reach.
    let emulator: APNsEmulator
    /// Connections to serve's API.
    let client: APIClient
    /// `/v1/apps/{bundleId}`.
    let appPath: String

    /// Starts the stack, runs `body` with it, and stops it, whether `body` throws or not.
    /// - Parameter connections: How many API connections the client opens.
    static func run(_ options: StackOptions, connections: Int, _ body: (BenchmarkStack) async throws -> Void) async throws {
        var configuration = APNsEmulator.Configuration(acceptsUnknownTokens: true)
        configuration.trustedKeys = [try TrustedKey(specification: options.signingKey)]
        let emulator = try await APNsEmulator.start(configuration: configuration)
        let clientLoops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        try await ensuring {
            let caFile = "\(options.work)/emulator.pem"
            try emulator.certificatePEM.write(toFile: caFile, atomically: true, encoding: .utf8)
            // No rate limit in the way, no reaper pass (it talks to APNs) in the middle of a measurement, and no
            // connection closed for idling: an open loop leaves the connections it does not need idle, and a run
            // longer than the default 60 s found some of them closed.
            let serve = try await ServeProcess.start(
                options.livecast,
                [
                    "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--rate-limit", "1000000000", "--rate-burst", "1000000000",
                    "--reap-interval", "0", "--http-idle-timeout", "86400", "--apns-push-url", "https://localhost:\(emulator.pushPort)",
                    "--apns-management-url", "https://localhost:\(emulator.managementPort)", "--apns-ca-file", caFile,
                ],
                work: options.work
            )
            try await ensuring {
                let client = try await APIClient.connect(
                    host: serve.host,
                    port: serve.port,
                    count: connections,
                    apiKey: options.apiKey,
                    on: clientLoops.next()
                )
                try await ensuring {
                    try await body(BenchmarkStack(emulator: emulator, client: client, appPath: "/v1/apps/\(options.bundleId)"))
                } cleanup: {
                    await client.close()
                }
            } cleanup: {
                await serve.stop()
            }
        } cleanup: {
            await emulator.shutdown()
            try? await clientLoops.shutdownGracefully()
        }
    }
}
