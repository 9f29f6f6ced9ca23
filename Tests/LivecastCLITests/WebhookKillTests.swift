import Foundation
import LivecastStore
import LivecastTesting
import LocalPostgres
import PostgresNIO
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `livecast serve` killed with SIGKILL while its webhook batch is in flight: another instance delivers every event,
/// the unanswered batch again (each event with its id), then the rest, in order per subject.
@Suite struct WebhookKillTests {
    private var livecast: String {
        Fixtures.productsDirectory.appendingPathComponent("livecast").path
    }

    @Test(.timeLimit(.minutes(5))) func aKilledDeliveringInstanceLosesNoEvent() async throws {
        let (database, url) = try await CLIDatabase.migrated(named: "cli_webhook_kill")
        let directory = try TemporaryDirectory()
        // A master key as its file holds it: 32 random bytes in base64.
        let masterKeyText = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        try masterKeyText.write(toFile: directory.path("master.key"), atomically: true, encoding: .utf8)
        let masterKey = try MasterKey(base64: masterKeyText)

        // The first request is held unanswered past the kill; every later one is answered 200 at once.
        try await WebhookReceiver.with(answer: { number in number == 0 ? .init(delay: .seconds(60)) : .init() }) { receiver in
            let (endpoint, eventIDs) = try await TestPostgres.withClient(database) { client in
                try await client.query(CLIDatabase.insertGameApp)
                var appID: Int64 = 0
                for try await id in try await client.query("SELECT id FROM apps").decode(Int64.self) { appID = id }
                let rows = WebhookRows(client: client, appID: appID)
                let endpoint = try await rows.insertEndpoint(url: receiver.url(), secret: .random(), masterKey: masterKey)
                return (endpoint, try await rows.insertEvents(subjects: ["order-1", "order-2", "order-3"], count: 80))
            }

            let first = try await self.serve(url, masterKeyFile: directory.path("master.key"))
            try await eventually(within: .seconds(60), "the first batch reached the receiver") { !receiver.requests.isEmpty }
            first.signal(SIGKILL)
            #expect(try await first.waitForExit() == SIGKILL)
            let unanswered = receiver.requests[0].events.map(\.id)
            #expect(unanswered.count == 100, "a whole batch was in flight")

            // The second instance takes the endpoint over once the dead one's lease (30 s) runs out.
            let second = try await self.serve(url, masterKeyFile: directory.path("master.key"))
            defer { second.signal(SIGTERM) }
            try await TestPostgres.withClient(database) { client in
                let rows = WebhookRows(client: client, appID: 0)
                try await eventually(within: .seconds(120), "every delivery acknowledged") { try await rows.pending(endpoint) == 0 }
            }
            let answered = receiver.requests.dropFirst()
            let delivered = answered.flatMap(\.events)
            #expect(delivered.map(\.id) == eventIDs.map(String.init), "every event once after the kill, in id order")
            #expect(Array(delivered.prefix(unanswered.count).map(\.id)) == unanswered, "the unanswered batch came again first")
            for subject in ["order-1", "order-2", "order-3"] {
                let ids = delivered.filter { $0.subject == subject }.compactMap { Int64($0.id) }
                #expect(ids == ids.sorted() && ids.count == 80, "\(subject) in order")
            }
        }
    }

    /// Starts `livecast serve` on free ports with one dispatcher worker and no reaper.
    private func serve(_ url: String, masterKeyFile: String) async throws -> BackgroundProcess {
        let port = try FreePort.next()
        let server = try await BackgroundProcess(
            self.livecast,
            [
                "serve", "--database-url", url, "--migrations", CLIDatabase.migrations, "--listen", "127.0.0.1:\(port)",
                "--metrics-listen", "127.0.0.1:\(try FreePort.next())", "--master-key-file", masterKeyFile,
                "--dispatch-workers", "1", "--reap-interval", "0",
            ]
        )
        #expect(try await server.waitForLine("listening on 127.0.0.1:\(port)"), "stderr: \(server.stderr)")
        return server
    }
}
