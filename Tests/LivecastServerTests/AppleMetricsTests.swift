import APNs
import APNsEmulator
import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import Logging
import PostgresNIO
import Synchronization
import Testing

@testable import LivecastServer

/// Apple's numbers beside Livecast's (#67), end to end: the emulator's data export counts what its iPhones did, the
/// job fetches it with the app's credentials as it would fetch Apple's, and the report and the console put it beside
/// what Livecast sent. "Yesterday" happens without waiting: the export's clock and the job's run days ahead.
@Suite struct AppleMetricsTests {
    private static let token = "ck-data-export-token-0123456789"
    private static let screenshots = Fixtures.repositoryRoot.appendingPathComponent(".build/console-screenshots").path

    @Test func aDayThroughTheEmulatorEndsInAReportOfWhatTheDevicesShowedFlaggedWhereItDiffers() async throws {
        try await Self.withStack("apple_metrics_day", testing: .live) { fixture, client, emulator, dispatcher, job in
            let stored = try await client.send(
                .put,
                "/v1/apps/com.example.game/apple-metrics/credentials",
                key: fixture.key(.admin),
                body: #"{"teamId": "TEAM123456", "token": "\#(Self.token)"}"#
            )
            #expect(stored.status == .ok, "\(stored.text)")
            #expect(stored.json["configured"] == .bool(true) && stored.json["credentials"]?["appId"]?.stringValue == "com.example.game")
            #expect(!stored.text.contains(Self.token), "the token is never shown again")
            let sealed = try await fixture.client.query("SELECT encode(token_sealed, 'escape') FROM apple_metrics_credentials")
            for try await text in sealed.decode(String.self) { #expect(!text.contains(Self.token), "the token is sealed") }

            // A day: game A on a channel with two iOS 18 followers and one token-based iOS 17 follower; game B on a
            // channel with one follower, too few for Apple to show. Two activities are lost on their devices, so the
            // devices discard what reaches them after.
            let backend = fixture.key(.backend)
            var devices: [DeviceSnapshot] = []
            for osVersion in ["18.2", "18.2", "17.5", "18.2"] {
                devices.append(try await fixture.registeredDevice(osVersion: osVersion, emulator: emulator, client: client))
            }
            let gameA = try await Self.startGame(
                "game-a",
                devices: Array(devices[0..<3]),
                fixture: fixture,
                client: client,
                emulator: emulator,
                dispatcher: dispatcher
            )
            let gameB = try await Self.startGame(
                "game-b",
                devices: [devices[3]],
                fixture: fixture,
                client: client,
                emulator: emulator,
                dispatcher: dispatcher
            )
            let lostTokenActivity = try #require(emulator.emulator.device(id: devices[2].id)?.activities.first)
            #expect(emulator.emulator.loseActivity(deviceID: devices[2].id, activityID: lostTokenActivity.id))
            let timestamp = Int(Date().timeIntervalSince1970) + 5
            for feed in ["game-a", "game-b"] {
                let update = try await client.send(
                    .post,
                    "/v1/apps/com.example.game/feeds/\(feed)/updates",
                    key: backend,
                    body: #"{"contentState": {"home": 1}, "timestamp": \#(timestamp)}"#
                )
                #expect(update.status == .accepted, "\(update.text)")
            }
            #expect(try await dispatcher.drain() == 2)
            let lostChannelActivity = try #require(emulator.emulator.device(id: devices[1].id)?.activities.first)
            #expect(emulator.emulator.loseActivity(deviceID: devices[1].id, activityID: lostChannelActivity.id))
            let end = try await client.send(
                .post,
                "/v1/apps/com.example.game/feeds/game-a/end",
                key: backend,
                body: #"{"contentState": {"home": 2}, "timestamp": \#(timestamp + 1)}"#
            )
            #expect(end.status == .accepted, "\(end.text)")
            #expect(try await dispatcher.drain() == 1)

            let outcome = try await job.run()
            #expect(outcome == AppleMetricsJob.Outcome(stored: 4, failed: 0, flagged: 2), "devices, the app's broadcasts and two channels")

            // What the devices showed, as Apple would count it.
            let shown = emulator.emulator.devices()
            let activities = shown.flatMap(\.activities)
            let tokenActivities = activities.filter { $0.updateToken != nil }
            let deliveredPushes = activities.count + tokenActivities.reduce(0) { $0 + $1.appliedPushes }
            let discardedPushes = tokenActivities.reduce(0) { $0 + $1.ignoredPushes.count } + shown.reduce(0) { $0 + $1.ignoredPushes.count }
            let published = { (channel: String) in
                emulator.emulator.wireRecords.filter { $0.target == "channel:\(channel)" && $0.status == 200 }.count
            }
            let channelA = activities.filter { $0.channelId == gameA }
            let deliveredA = channelA.reduce(0) { $0 + $1.appliedPushes }
            #expect(deliveredPushes == 4 && discardedPushes == 2 && deliveredA == 3 && published(gameA) == 2, "the day as planned")

            let today = AppleMetricsController.text(AppleMetricsController.day(Date()))
            let report = try await client.send(.get, "/v1/apps/com.example.game/delivery-report?from=\(today)&to=\(today)", key: backend)
            #expect(report.status == .ok, "\(report.text)")
            let day = try #require(report.json["days"].items.first { $0["day"]?.stringValue == today }, "\(report.text)")
            let pushes = try #require(day["pushTypes"].items.first { $0["pushType"]?.stringValue == "liveactivity" })
            #expect(pushes["apple"] == .object(["delivered": .int(deliveredPushes), "discarded": .int(discardedPushes)]), "\(pushes)")
            let accepted = try #require(pushes["livecast"]?["accepted"]?.intValue)
            #expect(accepted == 6, "four starts, and an update and an end to the lost token-based activity")
            let channels = Dictionary(uniqueKeysWithValues: day["channels"].items.map { ($0["channelId"]?.stringValue ?? "", $0) })
            let reportA = try #require(channels[gameA])
            #expect(
                reportA["apple"]
                    == .object(["published": .int(published(gameA)), "delivered": .int(deliveredA), "subscriptions": .int(channelA.count)]),
                "\(reportA)"
            )
            #expect(reportA["livecast"] == .object(["sent": .int(2), "accepted": .int(2)]))
            let reportB = try #require(channels[gameB])
            #expect(reportB["apple"] == .object(["tooFewSubscribers": .bool(true)]), "-1 is too few subscribers, not a number")
            #expect(reportB["flagged"] == .bool(false))
            #expect(day["allChannels"]?["uniqueSubscribers"]?.intValue == 3)

            // Flagged exactly where Apple's figures differ from what Livecast sent.
            let pushesDiffer = deliveredPushes != accepted
            let channelADiffers = published(gameA) != 2 || deliveredA != published(gameA) * channelA.count
            #expect(pushes["flagged"] == .bool(pushesDiffer) && reportA["flagged"] == .bool(channelADiffers))
            #expect(day["flagged"] == .bool(pushesDiffer || channelADiffers))
            #expect(report.json["days"].items.filter { $0["flagged"] == .bool(true) }.map { $0["day"]?.stringValue } == [today])

            // Each flagged subject is one event, however often the job runs.
            #expect(try await job.run() == AppleMetricsJob.Outcome())
            let subjectsOfEvents = { @Sendable in
                try await client.send(.get, "/v1/apps/com.example.game/events?types=delivery.diverged", key: backend)
                    .json["events"].items.map { $0["subject"]?["id"]?.stringValue ?? "" }
            }
            try await eventually("the divergences' events in the feed") { try await subjectsOfEvents().count >= 2 }
            let subjects = try await subjectsOfEvents()
            #expect(subjects.sorted() == [gameA, "com.example.game"].sorted(), "a channel and the app's push type, once each")

            // The reaper prunes the records a week later; Livecast's figures of the day were kept.
            try await fixture.client.query("DELETE FROM updates")
            let pruned = try await client.send(.get, "/v1/apps/com.example.game/delivery-report?from=\(today)&to=\(today)", key: backend)
            let prunedDay = try #require(pruned.json["days"].items.first)
            #expect(prunedDay["pushTypes"].items.first?["livecast"]?["accepted"]?.intValue == accepted, "\(pruned.text)")
            #expect(prunedDay["channels"].items.first { $0["channelId"]?.stringValue == gameA }?["livecast"] == reportA["livecast"])
            #expect(prunedDay["flagged"] == .bool(true))

            try await Self.checkTheConsole(fixture: fixture, client: client, channels: 2)
        }
    }

    @Test func badAnswersFromAppleAreRecordedAndLoseNoEarlierDay() async throws {
        try await Self.withStack("apple_metrics_bad_answers") { fixture, client, emulator, _, job in
            let admin = fixture.key(.admin)
            let device = try emulator.emulator.addDevice(
                bundleID: EmulatorFixture.bundleID,
                osVersion: "18.2",
                pushToStartTokens: ["GameAttributes": ""]
            )
            let start =
                #"{"aps": {"timestamp": \#(Int(Date().timeIntervalSince1970)), "event": "start", "attributes-type": "GameAttributes", "attributes": {}, "content-state": {}, "alert": {"title": "Kick-off"}}}"#
            #expect(try await emulator.devicePush(token: device.pushToStartTokens["GameAttributes"]!, payload: start).status == 200)
            let put = try await client.send(
                .put,
                "/v1/apps/com.example.game/apple-metrics/credentials",
                key: admin,
                body: #"{"teamId": "TEAM123456", "token": "\#(Self.token)"}"#
            )
            #expect(put.status == .ok, "\(put.text)")
            #expect(try await job.run().failed == 0)
            let today = AppleMetricsController.text(AppleMetricsController.day(Date()))
            let delivered = { () async throws -> Int? in
                let report = try await client.send(.get, "/v1/apps/com.example.game/delivery-report?from=\(today)&to=\(today)", key: admin)
                return report.json["days"].items.first?["pushTypes"].items.first?["apple"]?["delivered"]?.intValue
            }
            #expect(try await delivered() == 1)

            // A day later, Apple has a bad day in every way it documents.
            emulator.emulator.advanceClock(by: 86400)
            job.shift(days: 2)
            let answers: [(String, () -> Void)] = [
                ("ended FAILED", { emulator.emulator.dataExportFault = .failed }),
                ("ended EXPIRED", { emulator.emulator.dataExportFault = .expired }),
                ("column Apple does not document for deliverymetrics: \"Region\"", { emulator.emulator.dataExportFault = .unknownColumn }),
                ("Apple answered 401", { emulator.emulator.expireDataExportToken(Self.token) }),
            ]
            for (error, cause) in answers {
                cause()
                let outcome = try await job.run()
                #expect(outcome.failed > 0, "\(error)")
                let record = try await client.send(.get, "/v1/apps/com.example.game", key: admin)
                let exports = record.json["appleMetrics"]?["exports"].items ?? []
                let deliveries = try #require(exports.first { $0["dataset"]?.stringValue == "deliverymetrics" }, "\(record.text)")
                #expect(deliveries["lastError"]?.stringValue?.contains(error) == true, "\(deliveries)")
                #expect(deliveries["fetchedThrough"]?.stringValue == today, "a failure does not move the export on")
                #expect((record.json["appleMetrics"]?["failing"]?.intValue ?? 0) > 0)
                #expect(!record.text.contains(Self.token))
                #expect(try await delivered() == 1, "the earlier day is kept")
                let metrics = try await fixture.scrapeMetrics().text
                #expect(metrics.contains("livecast_apple_exports_failing"), "\(error)")
                #expect(metrics.contains(#"livecast_apple_exports_total{dataset="deliverymetrics",outcome="failed"}"#))
            }

            // A new token and a good day: the export goes on, and its error is gone.
            emulator.emulator.addDataExportToken(DataExportToken(token: "ck-new-token", teamID: "TEAM123456", bundleID: EmulatorFixture.bundleID))
            emulator.emulator.dataExportFault = .none
            let renewed = try await client.send(
                .put,
                "/v1/apps/com.example.game/apple-metrics/credentials",
                key: admin,
                body: #"{"teamId": "TEAM123456", "token": "ck-new-token"}"#
            )
            #expect(renewed.status == .ok)
            emulator.emulator.advanceClock(by: 86400)
            job.shift(days: 3)
            #expect(try await job.run().failed == 0)
            let record = try await client.send(.get, "/v1/apps/com.example.game/apple-metrics", key: admin)
            #expect(record.json["failing"]?.intValue == 0, "\(record.text)")
            #expect(try await delivered() == 1)
        }
    }

    @Test func credentialsNeedAnAdminAMasterKeyAndWellFormedValues() async throws {
        try await APIFixture.with("apple_metrics_credentials") { fixture, client in
            let path = "/v1/apps/com.example.game/apple-metrics/credentials"
            let body = #"{"teamId": "TEAM123456", "token": "abc"}"#
            #expect(try await client.send(.put, path, key: fixture.key(.operator), body: body).status == .forbidden)
            let noKey = try await client.send(.put, path, key: fixture.key(.admin), body: body)
            #expect(noKey.status == .conflict && noKey.errorCode == "master_key_required")
            let badDay = try await client.send(.get, "/v1/apps/com.example.game/delivery-report?from=2026-02-30", key: fixture.key(.backend))
            #expect(badDay.status == .unprocessableContent && badDay.errorField == "from")
            #expect(try await fixture.count("apple_metrics_credentials") == 0)
        }
        try await APIFixture.with("apple_metrics_credentials_key", settings: { $0.masterKey = .random() }) { fixture, client in
            let path = "/v1/apps/com.example.game/apple-metrics/credentials"
            let badTeam = try await client.send(.put, path, key: fixture.key(.admin), body: #"{"teamId": "team", "token": "abc"}"#)
            #expect(badTeam.status == .unprocessableContent && badTeam.errorField == "teamId")
            let badToken = try await client.send(.put, path, key: fixture.key(.admin), body: #"{"teamId": "TEAM123456", "token": "a b"}"#)
            #expect(badToken.status == .unprocessableContent && badToken.errorField == "token")
            #expect(try await client.send(.delete, path, key: fixture.key(.admin)).status == .notFound)
            #expect(try await fixture.count("apple_metrics_credentials") == 0)
        }
    }

    // MARK: - The stack

    /// The job, with a clock a test moves by whole days (one ahead to start with: today is its yesterday).
    final class ShiftedJob: Sendable {
        let database: PostgresClient
        let masterKey: MasterKey
        let settings: AppleMetricsJob.Settings
        let days = Mutex(1)
        let logger: Logger

        init(database: PostgresClient, masterKey: MasterKey, settings: AppleMetricsJob.Settings, logger: Logger) {
            self.database = database
            self.masterKey = masterKey
            self.settings = settings
            self.logger = logger
        }

        func shift(days: Int) { self.days.withLock { $0 = days } }

        func run() async throws -> AppleMetricsJob.Outcome {
            let days = self.days.withLock { $0 }
            var settings = self.settings
            settings.now = { Date().addingTimeInterval(TimeInterval(days) * 86400) }
            return try await AppleMetricsJob(database: self.database, masterKey: self.masterKey, settings: settings, logger: self.logger).run()
        }
    }

    /// The emulator (its export a day ahead, each export processing for two polls), a fixture whose apps send to it
    /// with a master key, a dispatcher, and the job pointed at the emulator.
    private static func withStack(
        _ name: String,
        testing: TestingSetup = .router,
        _ body: @Sendable (APIFixture, any TestClientProtocol, EmulatorFixture, Dispatcher, ShiftedJob) async throws -> Void
    ) async throws {
        try await EmulatorFixture.with({
            $0.recordsWire = true
            $0.dataExportClockOffset = 86400
            $0.dataExportProcessingPolls = 2
        }) { emulator in
            emulator.emulator.addDataExportToken(DataExportToken(token: Self.token, teamID: "TEAM123456", bundleID: EmulatorFixture.bundleID))
            let apns = try emulator.makeClient()
            defer { Task { await apns.shutdown() } }
            let masterKey = MasterKey.random()
            try await APIFixture.with(name, emulator: emulator, testing: testing, settings: { $0.masterKey = masterKey }) { fixture, client in
                let dispatcher = Dispatcher(
                    database: fixture.client,
                    appClients: FixedAppClients(apns, bundleID: EmulatorFixture.bundleID),
                    settings: .init(),
                    logger: fixture.store.logger
                )
                let job = ShiftedJob(
                    database: fixture.client,
                    masterKey: masterKey,
                    settings: AppleMetricsJob.Settings(url: emulator.pushURL, caFile: emulator.curl.caFile, firstPollDelay: .milliseconds(20)),
                    logger: fixture.store.logger
                )
                try await body(fixture, client, emulator, dispatcher, job)
            }
        }
    }

    /// A feed with a No Storage channel started on `devices`, their activities registered. - Returns: The channel.
    private static func startGame(
        _ feed: String,
        devices: [DeviceSnapshot],
        fixture: APIFixture,
        client: any TestClientProtocol,
        emulator: EmulatorFixture,
        dispatcher: Dispatcher
    ) async throws -> String {
        let path = "/v1/apps/com.example.game/feeds/\(feed)"
        let created = try await client.send(
            .put,
            path,
            key: fixture.key(.operator),
            body: #"{"attributesType": "GameAttributes", "attributes": {"home": "Giants"}, "channel": {"storagePolicy": "noStorage"}}"#
        )
        #expect(created.status == .created, "\(created.text)")
        let ids = devices.map { #""\#($0.id)""# }.joined(separator: ", ")
        let start = try await client.send(
            .post,
            "\(path)/start",
            key: fixture.key(.backend),
            body: #"{"contentState": {"home": 0}, "alert": {"title": "Kick-off"}, "audience": {"deviceIds": [\#(ids)]}}"#
        )
        #expect(start.status == .accepted, "\(start.text)")
        #expect(try await dispatcher.drain() == 1)
        var channel = ""
        for device in devices {
            let activity = try #require(emulator.emulator.device(id: device.id)?.activities.last)
            channel = activity.channelId ?? channel
            let registered = try await client.send(
                .put,
                "/v1/apps/com.example.game/activities/\(activity.id)",
                key: fixture.key(.backend),
                body: activity.updateToken.map { #"{"attributesType": "GameAttributes", "feed": "\#(feed)", "pushToken": "\#($0)"}"# }
                    ?? #"{"attributesType": "GameAttributes", "feed": "\#(feed)", "channelId": "\#(activity.channelId ?? "")"}"#
            )
            #expect(registered.status == .created, "\(registered.text)")
        }
        return channel
    }

    /// The console's page in Chromium: the charts drawn, today flagged, the small channel said to have too few
    /// subscribers; a screenshot for docs/console/.
    private static func checkTheConsole(fixture: APIFixture, client: any TestClientProtocol, channels: Int) async throws {
        let base = "http://127.0.0.1:\(try #require(client.port))"
        try await ChromeDriver.with(windowWidth: 1280, windowHeight: 1400) { browser in
            try await browser.open("\(base)/console")
            try await browser.find("#key").type(fixture.key(.backend))
            try await browser.find("form button[type=submit]").click()
            try await browser.waitUntil("the overview after signing in") { try await browser.currentURL().hasSuffix("/console") }
            try await browser.find("nav a[href='/console/delivery-report']").click()
            _ = try await browser.find("#chart-total")
            #expect(try await browser.findAll("#chart-total rect.flagged").count == 1, "today is flagged")
            #expect(try await browser.findAll("#chart-total rect.apple").count == 1)
            #expect(try await browser.findAll("svg.delivery-chart").count == 1 + channels)
            #expect(try await browser.findAll("svg.delivery-chart rect.withheld").count == 1)
            #expect(try await browser.find("#withheld").text().contains("Too few subscribers"))
            #expect(try await browser.findAll("#flagged-days tbody tr").count == 2)
            let log = try await browser.browserLog()
            #expect(!log.contains { $0.hasPrefix("SEVERE") }, "\(log)")
            try await browser.screenshot(to: "\(Self.screenshots)/delivery-report.png")
        }
    }
}
