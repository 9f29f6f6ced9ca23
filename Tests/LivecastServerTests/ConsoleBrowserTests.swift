import APNsEmulator
import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import Testing

@testable import LivecastServer

/// The console in a real browser: Debian's headless Chromium over WebDriver, against the served API with
/// PostgreSQL and the emulator. Screenshots go to `.build/console-screenshots/` (docs/OPERATIONS.md shows copies from
/// `docs/console/`).
@Suite struct ConsoleBrowserTests {
    private static let followerCount = 5000
    private static let screenshots = Fixtures.repositoryRoot.appendingPathComponent(".build/console-screenshots").path

    @Test func anOperatorRunsAGameFromTheConsole() async throws {
        try await APIFixture.withEmulator("console_browser", testing: .live) { fixture, client, emulator, dispatcher in
            let base = "http://127.0.0.1:\(try #require(client.port))"
            let (followers, standalone) = try await Self.feedWithFollowers(
                fixture: fixture,
                client: client,
                emulator: emulator,
                dispatcher: dispatcher
            )
            try await ChromeDriver.with(windowWidth: 1280, windowHeight: 1000) { browser in
                try await Self.signIn(browser, base: base, key: fixture.key(.operator))
                try await Self.expectTheIconLoads(browser)
                let cookies = try await browser.cookies()
                let session = try #require(cookies.first { $0.name == Console.sessionCookie })
                #expect(session.isHTTPOnly && session.sameSite == "Strict")
                #expect(!cookies.contains { $0.value.contains(fixture.key(.operator)) }, "the key never reaches the browser")
                try await browser.screenshot(to: "\(Self.screenshots)/overview.png")

                let channelID = try await Self.createChannel(browser, base: base, fixture: fixture, client: client)
                let forged = try await browser.executeScript(
                    "return fetch('/console/channels', {method: 'POST', body: new URLSearchParams({storagePolicy: 'noStorage'})}).then(r => String(r.status))"
                )
                #expect(forged == "403", "a POST without the CSRF token is refused")

                let apnsID = try await Self.watchAFanOut(
                    browser,
                    base: base,
                    fixture: fixture,
                    client: client,
                    dispatcher: dispatcher,
                    emulator: emulator,
                    followers: followers
                )
                let drainer = Task {
                    while !Task.isCancelled {
                        _ = try? await dispatcher.drain()
                        try? await Task.sleep(for: .milliseconds(100))
                    }
                }
                defer { drainer.cancel() }

                try await browser.open("\(base)/console/deliveries")
                try await browser.find("#apnsId").type(apnsID)
                try await browser.find("#search").click()
                try await browser.waitUntil("the push is found by its apns-id") {
                    let rows = try await browser.findAll("#deliveries tbody tr")
                    guard rows.count == 1 else { return false }
                    let text = try await rows[0].text()
                    return text.contains(apnsID) && text.contains("delivered")
                }
                try await browser.screenshot(to: "\(Self.screenshots)/deliveries.png")

                let letter = try await fixture.deadLetter(activityKey: followers[0])
                try await browser.open("\(base)/console/dead-letters")
                try await browser.find("#dead-letter-\(letter) button").click()
                try await browser.waitUntil("the dead letter is replayed") {
                    (try? await browser.find(".notice", timeout: .milliseconds(200)).text())?.contains("requeued") == true
                }
                #expect(try await browser.find("#dead-letter-\(letter)").text().contains("requeued"))
                try await browser.screenshot(to: "\(Self.screenshots)/dead-letters.png")

                try await Self.sendATestPush(browser, base: base, activityID: standalone)
                try await browser.setWindowSize(width: 390, height: 844)
                try await browser.open("\(base)/console/feeds/game-1")
                try await browser.screenshot(to: "\(Self.screenshots)/feed-phone.png")
                try await browser.emulateColorScheme("dark")
                try await browser.open("\(base)/console/feeds/game-1")
                let background = try await browser.executeScript("return getComputedStyle(document.body).backgroundColor")
                #expect(background == "rgb(20, 20, 22)", "the dark palette: \(background ?? "none")")
                try await browser.screenshot(to: "\(Self.screenshots)/feed-phone-dark.png")
                try await browser.emulateColorScheme("light")
                try await browser.setWindowSize(width: 1280, height: 1000)

                try await browser.find("#sign-out").click()
                try await browser.waitUntil("signed out") { try await browser.pageSource().contains("You are signed out.") }
                try await browser.open("\(base)/console/channels")
                #expect(try await browser.currentURL().contains("/console/login"), "signed out, pages need signing in again")

                try await Self.signIn(browser, base: base, key: fixture.key(.backend))
                let retired = try await browser.executeScript(
                    """
                    const form = new URLSearchParams({csrf: document.querySelector('input[name=csrf]').value, channelId: arguments[0]});
                    return fetch('/console/channels/retire', {method: 'POST', body: form}).then(r => String(r.status));
                    """,
                    arguments: [channelID]
                )
                #expect(retired == "403", "a backend key cannot retire a channel")
                let channel = try await client.send(
                    .get,
                    "/v1/apps/com.example.game/channels/\(InProcessAPI.segment(channelID))",
                    key: fixture.key(.operator)
                )
                #expect(channel.json["state"]?.stringValue == "active")
            }
        }
    }

    /// The pages name an icon the server serves, so the browser logs no failed load of one (a `/favicon.ico` 404 was
    /// the one error of an otherwise clean console).
    private static func expectTheIconLoads(_ browser: WebDriverSession) async throws {
        let log = try await browser.browserLog()
        #expect(!log.contains { $0.contains("favicon") }, "\(log)")
        #expect(!log.contains { $0.hasPrefix("SEVERE") }, "the sign-in and the overview log no error: \(log)")
        let icon = try await browser.executeScript(
            "return fetch((document.querySelector('link[rel=icon]') || {href: '/favicon.ico'}).href).then(r => r.status + ' ' + r.headers.get('content-type'))"
        )
        #expect(icon == "200 image/svg+xml")
    }

    /// Signs in through the form and lands on the overview.
    private static func signIn(_ browser: WebDriverSession, base: String, key: String) async throws {
        try await browser.open("\(base)/console")
        #expect(try await browser.currentURL().contains("/console/login"))
        try await browser.find("#key").type(key)
        try await browser.find("form button[type=submit]").click()
        try await browser.waitUntil("the overview after signing in") { try await browser.currentURL().hasSuffix("/console") }
        _ = try await browser.find("#outbox-depth")
    }

    /// Creates a channel with the most-recent-message policy and sees it listed, as APNs lists it too.
    private static func createChannel(
        _ browser: WebDriverSession,
        base: String,
        fixture: APIFixture,
        client: any TestClientProtocol
    ) async throws -> String {
        try await browser.open("\(base)/console/channels")
        try await browser.find("#storagePolicy option[value=mostRecentMessage]").click()
        try await browser.find("#create-channel").click()
        try await browser.waitUntil("the channel is listed") { try await browser.findAll("#registry tbody tr").count == 1 }
        let listed = try await client.send(.get, "/v1/apps/com.example.game/channels", key: fixture.key(.operator))
        let channelID = try #require(listed.json["channels"].items.first?["channelId"]?.stringValue)
        #expect(listed.json["channels"].items.first?["storagePolicy"]?.stringValue == "mostRecentMessage")
        let row = try await browser.find("#registry tbody tr")
        #expect(try await row.attribute("data-channel") == channelID)
        #expect(try await row.text().contains("yes"), "at APNs too")
        try await browser.screenshot(to: "\(Self.screenshots)/channels.png")
        return channelID
    }

    /// Posts an update to the feed's followers, opens the feed, then lets the dispatcher send it and watches the
    /// progress reach 100% on the page. - Returns: The `apns-id` one follower's activity applied.
    private static func watchAFanOut(
        _ browser: WebDriverSession,
        base: String,
        fixture: APIFixture,
        client: any TestClientProtocol,
        dispatcher: Dispatcher,
        emulator: EmulatorFixture,
        followers: [String]
    ) async throws -> String {
        let update = try await client.send(
            .post,
            "/v1/apps/com.example.game/feeds/game-1/updates",
            key: fixture.key(.backend),
            body: #"{"contentState": {"home": 1}, "alert": {"title": "Goal!"}}"#
        )
        let updateID = try #require(update.json["updateId"]?.intValue, "\(update.text)")
        try await browser.open("\(base)/console/feeds/game-1")
        let progress = try await browser.find("#update-\(updateID) progress")
        #expect(try await progress.attribute("value") == "0", "nothing is sent before the dispatcher runs")
        #expect(try await browser.find("#token-followers").text() == "\(Self.followerCount)")
        let sending = Task { try await dispatcher.drain() }
        try await browser.waitUntil(timeout: .seconds(300), "the progress reaches 100%") {
            let status = try await browser.find("#update-\(updateID) [data-field=status]").text()
            return try await progress.attribute("value") == "100" && status == "sent"
        }
        #expect(try await sending.value >= 1)
        let summary = try await browser.find("#update-\(updateID) [data-field=summary]").text()
        #expect(summary.hasPrefix("100% · \(Self.followerCount) sent · 0 failed"), "\(summary)")
        try await browser.screenshot(to: "\(Self.screenshots)/feed.png")
        let device = try #require(emulator.emulator.device(id: followers[0]))
        return try #require(device.activities.first?.lastApnsId)
    }

    /// Sends a test update to one activity from its page and reads APNs' answer there.
    private static func sendATestPush(_ browser: WebDriverSession, base: String, activityID: String) async throws {
        try await browser.open("\(base)/console/activities/\(activityID)")
        let contentState = try await browser.find("#contentState")
        try await contentState.clear()
        try await contentState.type(#"{"home": 2}"#)
        try await browser.find("#send-test-push").click()
        let result = try await browser.find("#test-push-result", timeout: .seconds(30)).text()
        #expect(result.contains("delivered"), "\(result)")
        try await browser.screenshot(to: "\(Self.screenshots)/activity.png")
    }

    /// A feed `game-1` followed by token by `followerCount` emulator iPhones: their push-to-start tokens imported,
    /// the feed started on every one, and the activities they started imported with their update tokens, as their
    /// apps would register them; one more iPhone's activity is registered on its own, outside the feed.
    /// - Returns: The followers' activity ids (their devices' ids), and the standalone activity's.
    private static func feedWithFollowers(
        fixture: APIFixture,
        client: any TestClientProtocol,
        emulator: EmulatorFixture,
        dispatcher: Dispatcher
    ) async throws -> (followers: [String], standalone: String) {
        let app = "/v1/apps/com.example.game"
        let feed = try await client.send(
            .put,
            "\(app)/feeds/game-1",
            key: fixture.key(.operator),
            body: #"{"attributesType": "GameAttributes", "attributes": {"home": "Lions"}}"#
        )
        #expect(feed.status == .created, "\(feed.text)")
        let devices = try (0...Self.followerCount).map { _ in
            try emulator.emulator.addDevice(bundleID: EmulatorFixture.bundleID, osVersion: "17.5", pushToStartTokens: ["GameAttributes": ""])
        }
        let tokenRows = devices.map {
            #"{"deviceId": "\#($0.id)", "attributesType": "GameAttributes", "token": "\#($0.pushToStartTokens["GameAttributes"]!)", "osVersion": "17.5"}"#
        }
        let importedTokens = try await Self.importInParts(tokenRows, to: "\(app)/push-to-start-tokens:import", fixture: fixture, client: client)
        #expect(importedTokens == devices.count)
        let start = try await client.send(
            .post,
            "\(app)/feeds/game-1/start",
            key: fixture.key(.backend),
            body: #"{"contentState": {"home": 0}, "alert": {"title": "Kick-off"}, "audience": {"everyone": true}}"#
        )
        #expect(start.status == .accepted, "\(start.text)")
        _ = try await dispatcher.drain()
        let updateTokens = try devices.map { device in
            try #require(emulator.emulator.device(id: device.id)?.activities.first?.updateToken, "device \(device.id) started nothing")
        }
        let activities = zip(devices, updateTokens).dropLast().map { device, token in
            #"{"activityId": "\#(device.id)", "attributesType": "GameAttributes", "feed": "game-1", "pushToken": "\#(token)", "deviceId": "\#(device.id)", "osVersion": "17.5"}"#
        }
        let registered = try await Self.importInParts(activities, to: "\(app)/activities:import", fixture: fixture, client: client)
        #expect(registered == Self.followerCount)
        let standalone = devices[Self.followerCount].id
        let single = try await client.send(
            .put,
            "\(app)/activities/\(standalone)",
            key: fixture.key(.backend),
            body: #"{"attributesType": "GameAttributes", "pushToken": "\#(updateTokens[Self.followerCount])", "deviceId": "\#(standalone)"}"#
        )
        #expect(single.status == .created, "\(single.text)")
        return (devices.dropLast().map(\.id), standalone)
    }

    /// Rows per import request: Hummingbird's live test client gives a request 20 s, which one 5,000-row import can
    /// outlast on a starved runner.
    private static let importPartSize = 1000

    /// Posts `rows` to an import route ``importPartSize`` at a time, each part checked to be created whole.
    /// - Returns: How many rows were created.
    private static func importInParts(
        _ rows: [String],
        to path: String,
        fixture: APIFixture,
        client: any TestClientProtocol
    ) async throws -> Int {
        var created = 0
        for start in stride(from: 0, to: rows.count, by: Self.importPartSize) {
            let part = rows[start..<min(start + Self.importPartSize, rows.count)]
            let answer = try await client.send(.post, path, key: fixture.key(.backend), body: "[\(part.joined(separator: ","))]")
            let count = answer.json["counts"]?["created"]?.intValue
            #expect(count == part.count, "\(answer.text.prefix(500))")
            created += count ?? 0
        }
        return created
    }
}
