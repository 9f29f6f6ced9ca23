import APNsEmulator
import LivecastCore
import LivecastKit

/// The demo's game, played through Livecast's HTTP API only: simulated iPhones report their push-to-start tokens and
/// then their activities through LivecastKit with the app's client key (device → Livecast), the backend starts the
/// feed on all of them, goals follow a second apart, a late update is refused, and the end dismisses the activities
/// a quarter of an hour later (Livecast → APNs → device). After each step the game waits until the devices show it,
/// and says how many do.
struct DemoGame: Sendable {
    static let feedKey = "game-4711"
    static let attributesType = "GameAttributes"
    static let kickOff = DemoScore(home: 0, away: 0, minute: 0)
    /// One update each, a second apart.
    static let goals = [DemoScore(home: 1, away: 0, minute: 12), DemoScore(home: 1, away: 1, minute: 37), DemoScore(home: 2, away: 1, minute: 78)]
    static let fullTime = DemoScore(home: 2, away: 1, minute: 90)
    /// How long ended activities stay on the Lock Screen, in seconds.
    static let dismissalDelay = 15 * 60
    /// The longest a step waits for the devices.
    static let patience: Duration = .seconds(20)

    let api: DemoAPIClient
    let emulator: APNsEmulator
    let app: DemoApp
    /// The iPhones' LivecastKit configuration; each phone keeps its store in a directory of its own below it.
    let phoneConfiguration: LivecastClient.Configuration
    let deviceCount: Int
    let progress: DemoProgress

    /// Plays the game. - Returns: what the devices show at the end, and what they should show.
    /// - Throws: ``DemoFailure`` when the API refuses a step the game needs.
    func play() async throws -> DemoReport {
        var phones: [SimulatedPhone] = []
        do {
            let report = try await self.play(phones: &phones)
            for phone in phones { await phone.stop() }
            return report
        } catch {
            for phone in phones { await phone.stop() }
            throw error
        }
    }

    private func play(phones: inout [SimulatedPhone]) async throws -> DemoReport {
        phones = try await self.registerDevices()
        let devices = phones.map(\.deviceID)
        try await self.createFeed()
        var timestamp = try await self.start(devices)
        try await self.registerActivities(phones)
        for goal in Self.goals {
            timestamp += 1
            try await self.update(goal, timestamp: timestamp, devices)
        }
        let lateUpdateRefused = try await self.sendLateUpdate(timestamp: timestamp - 1)
        timestamp += 1
        let dismissalDate = timestamp + Self.dismissalDelay
        try await self.end(timestamp: timestamp, dismissalDate: dismissalDate, devices)
        return DemoReport(
            devices: devices.compactMap { self.emulator.device(id: $0) },
            expected: .init(content: Self.fullTime.json, endTimestamp: timestamp, dismissalDate: dismissalDate),
            problems: lateUpdateRefused ? [] : ["the late update was not refused with 409 stale_timestamp"]
        )
    }

    /// Adds the simulated iPhones, half on iOS 18 (rounded up) and half on iOS 17, each with the app, which reports
    /// its push-to-start token through LivecastKit. - Returns: the phones, once Livecast has every token.
    private func registerDevices() async throws -> [SimulatedPhone] {
        let onIOS18 = (self.deviceCount + 1) / 2
        var phones: [SimulatedPhone] = []
        for index in 0..<self.deviceCount {
            let osVersion = index < onIOS18 ? "18.2" : "17.5"
            let device = try self.emulator.addDevice(bundleID: DemoApp.bundleID, osVersion: osVersion, pushToStartTokens: [Self.attributesType: ""])
            phones.append(
                try SimulatedPhone(
                    deviceID: device.id,
                    osVersion: osVersion,
                    emulator: self.emulator,
                    configuration: self.phoneConfiguration,
                    feed: Self.feedKey
                )
            )
        }
        try await self.waitForReports("devices", from: phones) { $0.hasReportedPushToStartTokens(of: [Self.attributesType]) }
        self.progress.done(
            "devices",
            "\(self.deviceCount) simulated iPhones registered their push-to-start tokens through LivecastKit (\(onIOS18) on iOS 18, \(self.deviceCount - onIOS18) on iOS 17)"
        )
        return phones
    }

    /// Waits until every phone's reports are acknowledged.
    /// - Throws: ``DemoFailure`` when Livecast refused one, or patience ran out.
    private func waitForReports(_ step: String, from phones: [SimulatedPhone], until isDone: (SimulatedPhone) -> Bool) async throws {
        let deadline = ContinuousClock.now + Self.patience
        while true {
            if let refused = phones.lazy.flatMap(\.dropped).first { throw DemoFailure("\(step): Livecast refused \(refused)") }
            let waiting = phones.filter { !isDone($0) }.count
            if waiting == 0 { return }
            guard ContinuousClock.now < deadline else {
                throw DemoFailure("\(step): \(waiting) iPhones' reports not acknowledged within \(Self.patience)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    private func createFeed() async throws {
        let feed = try await self.api.expectSuccess(
            "feed",
            "PUT",
            "/feeds/\(Self.feedKey)",
            key: self.app.operatorKey,
            body: .object([
                "attributesType": .string(Self.attributesType),
                "attributes": .object(["home": .string("Giants"), "away": .string("Rockets")]),
                "channel": .object(["storagePolicy": .string("noStorage")]),
            ])
        )
        self.progress.done("feed", "\(Self.feedKey), Giants v Rockets, on broadcast channel \(feed.json["channelId"]?.stringValue ?? "?")")
    }

    /// Starts the activity on every device. - Returns: the start's timestamp.
    private func start(_ devices: [String]) async throws -> Int {
        let answer = try await self.api.expectSuccess(
            "start",
            "POST",
            "/feeds/\(Self.feedKey)/start",
            key: self.app.backendKey,
            body: .object([
                "contentState": Self.kickOff.json,
                "alert": .object(["title": .string("Kick-off"), "body": .string("Giants v Rockets")]),
                "audience": .object(["everyone": .bool(true)]),
            ])
        )
        guard let timestamp = answer.json["timestamp"]?.intValue else { throw DemoFailure("start: the answer has no timestamp: \(answer.json)") }
        let started = try await self.wait(for: devices) { !$0.activities.isEmpty }
        self.report(started, of: devices, step: "start", outcome: "\(started.count) devices")
        return timestamp
    }

    /// Waits until each phone has reported its started activity, with its channel or its update token, through
    /// LivecastKit.
    private func registerActivities(_ phones: [SimulatedPhone]) async throws {
        try await self.waitForReports("activities", from: phones) { phone in
            phone.hasReportedActivities(self.emulator.device(id: phone.deviceID)?.activities.map(\.id) ?? [])
        }
        var (channels, tokens) = (0, 0)
        for device in phones.compactMap({ self.emulator.device(id: $0.deviceID) }) {
            guard let activity = device.activities.first else { continue }
            if activity.channelId != nil {
                channels += 1
            } else if activity.updateToken != nil {
                tokens += 1
            }
        }
        self.progress.done("activities", "\(channels + tokens) registered (\(channels) with a channel id, \(tokens) with an update token)")
    }

    private func update(_ score: DemoScore, timestamp: Int, _ devices: [String]) async throws {
        _ = try await self.api.expectSuccess(
            "update",
            "POST",
            "/feeds/\(Self.feedKey)/updates",
            key: self.app.backendKey,
            body: .object([
                "contentState": score.json,
                "timestamp": .int(timestamp),
                "alert": .object(["title": .string("Goal!"), "body": .string("Giants \(score.home) - \(score.away) Rockets")]),
            ])
        )
        let showing = try await self.wait(for: devices) { $0.activities.first?.contentState == score.json }
        self.report(showing, of: devices, step: "update \(score.text)", outcome: "\(showing.count)/\(devices.count) devices show it")
    }

    /// Sends the equaliser again, as a delayed retry would, a second older than the last goal.
    /// - Returns: whether Livecast refused it with `409 stale_timestamp`.
    private func sendLateUpdate(timestamp: Int) async throws -> Bool {
        let late = Self.goals[1]
        let answer = try await self.api.send(
            "POST",
            "/feeds/\(Self.feedKey)/updates",
            key: self.app.backendKey,
            body: .object(["contentState": late.json, "timestamp": .int(timestamp)])
        )
        let step = "late update \(late.text) (timestamp \(timestamp), older than the last)"
        guard answer.status == 409, answer.errorCode == "stale_timestamp" else {
            self.progress.failed(step, "answered \(answer.status) \(answer.errorCode ?? "") instead of 409 stale_timestamp")
            return false
        }
        self.progress.done(step, "refused: 409 stale_timestamp, nothing sent")
        return true
    }

    private func end(timestamp: Int, dismissalDate: Int, _ devices: [String]) async throws {
        _ = try await self.api.expectSuccess(
            "end",
            "POST",
            "/feeds/\(Self.feedKey)/end",
            key: self.app.backendKey,
            body: .object(["contentState": Self.fullTime.json, "timestamp": .int(timestamp), "dismissalDate": .int(dismissalDate)])
        )
        let ended = try await self.wait(for: devices) { $0.activities.first.map { $0.state == .ended && $0.lastTimestamp == timestamp } ?? false }
        self.report(
            ended,
            of: devices,
            step: "end \(Self.fullTime.text)",
            outcome: "\(ended.count)/\(devices.count) devices ended, dismissal at \(DemoReport.clockTime(dismissalDate))"
        )
    }

    /// Polls the devices until `isDone` holds for every one or patience runs out.
    /// - Returns: the devices it holds for.
    private func wait(for devices: [String], until isDone: (DeviceSnapshot) -> Bool) async throws -> [DeviceSnapshot] {
        let deadline = ContinuousClock.now + Self.patience
        while true {
            let done = devices.compactMap { self.emulator.device(id: $0) }.filter(isDone)
            if done.count == devices.count || ContinuousClock.now >= deadline { return done }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// `✓ step → outcome (3 on channel, 3 by token)` when every device got there, else `✗` with how long it waited.
    private func report(_ done: [DeviceSnapshot], of devices: [String], step: String, outcome: String) {
        let onChannel = done.filter { $0.activities.first?.channelId != nil }.count
        let detail = "\(outcome) (\(onChannel) on channel, \(done.count - onChannel) by token)"
        if done.count == devices.count {
            self.progress.done(step, detail)
        } else {
            self.progress.failed(step, "\(detail); \(devices.count - done.count) did not within \(Self.patience)")
        }
    }
}
