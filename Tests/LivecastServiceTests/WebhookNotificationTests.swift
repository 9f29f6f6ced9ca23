import LivecastService
import LivecastStore
import LivecastTesting
import Logging
import Testing

/// New deliveries wake idle webhook workers through PostgreSQL's `NOTIFY` (`sql/0038`), not at their next poll.
@Suite struct WebhookNotificationTests {
    private let logger = Logger(label: "test.webhooks", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test func anIdleWorkerDeliversANewEventAtItsNotification() async throws {
        try await StoreFixture.with("webhook_notify") { fixture in
            try await WebhookReceiver.with { receiver in
                let masterKey = MasterKey.random()
                let rows = WebhookRows(client: fixture.client, appID: fixture.appID)
                let endpoint = try await rows.insertEndpoint(url: receiver.url(), secret: .random(), masterKey: masterKey)
                // Polling every 10 minutes: only the notification can bring the event within the wait below.
                let service = WebhookService(
                    database: fixture.client,
                    masterKey: masterKey,
                    workers: 2,
                    pollInterval: .seconds(600),
                    logger: self.logger
                )
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await service.run() }
                    try await eventually("both workers idle") { service.waitingWorkers == 2 }
                    let written = try await rows.insertEvents(subjects: ["order-1"])
                    try await eventually(within: .seconds(30), "the event delivered") { try await rows.pending(endpoint) == 0 }
                    group.cancelAll()
                    #expect(receiver.requests.flatMap(\.events).map(\.id) == written.map(String.init))
                }
            }
        }
    }
}
