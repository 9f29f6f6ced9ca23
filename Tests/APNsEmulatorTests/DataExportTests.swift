import APNsEmulator
import Foundation
import LivecastCore
import LivecastTesting
import Testing

/// The emulator's data export in Apple's shape, through curl: what the devices did, per day, behind a token of the
/// team and app, a status URL that processes first, the `-1` rule, and Apple's refusals.
@Suite struct DataExportTests {
    private static let token = "ck-token-1"

    @Test func anExportCountsWhatTheDevicesDidBehindAStatusURL() async throws {
        try await EmulatorFixture.with({
            $0.dataExportClockOffset = 86400
            $0.dataExportProcessingPolls = 1
            $0.dataExportTokens = [DataExportToken(token: Self.token, teamID: "TEAM123456", bundleID: EmulatorFixture.bundleID)]
        }) { emulator in
            let channel = try await emulator.createChannel()
            let now = Int(Date().timeIntervalSince1970)
            var started = 0
            for _ in 0..<3 {
                let device = try emulator.emulator.addDevice(
                    bundleID: EmulatorFixture.bundleID,
                    osVersion: "18.2",
                    pushToStartTokens: ["GameAttributes": ""]
                )
                let start =
                    #"{"aps": {"timestamp": \#(now), "event": "start", "attributes-type": "GameAttributes", "attributes": {}, "content-state": {}, "alert": {"title": "Go"}, "input-push-channel": "\#(channel)"}}"#
                #expect(try await emulator.devicePush(token: device.pushToStartTokens["GameAttributes"]!, payload: start).status == 200)
                started += 1
                // An update to a push-to-start token: the device discards it (notAStart).
                if started == 1 {
                    let again = try await emulator.devicePush(
                        token: device.pushToStartTokens["GameAttributes"]!,
                        payload: #"{"aps": {"timestamp": \#(now), "event": "update", "content-state": {}}}"#
                    )
                    #expect(again.status == 200)
                }
            }
            let update = #"{"aps": {"timestamp": \#(now + 1), "event": "update", "content-state": {"home": 1}}}"#
            #expect(try await emulator.broadcast(payload: update, headers: emulator.broadcastHeaders(channelID: channel)).status == 200)
            let next = #"{"aps": {"timestamp": \#(now + 2), "event": "update", "content-state": {"home": 2}}}"#
            #expect(try await emulator.broadcast(payload: next, headers: emulator.broadcastHeaders(channelID: channel)).status == 200)

            let today = Self.date(now)
            let yesterday = Self.date(now - 86400)
            let headers = [("x-apple-cloudkit-management-token", Self.token), ("content-type", "application/json")]
            let path = "\(emulator.pushURL)/v1/dataExports/apns/teams/TEAM123456/appId/\(EmulatorFixture.bundleID)/datasetName"
            let body = #"{"startDate": "\#(yesterday)", "endDate": "\#(today)", "dataDownloadUrlExpiresInMinutes": 60}"#
            let requested = try await emulator.curl.send(Curl.Request("POST", "\(path)/deliverymetrics/request", headers: headers, body: body))
            #expect(requested.status == 200, "\(requested.body)")
            let statusURL = try #require(requested.json?["statusUrl"]?.stringValue)
            #expect(requested.json?["requestedAt"]?.stringValue != nil)
            let again = try await emulator.curl.send(Curl.Request("POST", "\(path)/deliverymetrics/request", headers: headers, body: body))
            #expect(again.json?["statusUrl"]?.stringValue == statusURL, "the same request within 24 hours, the same status URL")

            let first = try await emulator.curl.send(Curl.Request("GET", statusURL, headers: headers))
            #expect(first.json?["status"]?.stringValue == "PROCESSING" && first.json?["downloadDetails"] == nil)
            let done = try await emulator.curl.send(Curl.Request("GET", statusURL, headers: headers))
            #expect(done.json?["status"]?.stringValue == "SUCCESS", "\(done.body)")
            let dataURL = try #require(done.json?["downloadDetails"]?["dataUrl"]?.stringValue)
            let csv = try await emulator.curl.send(Curl.Request("GET", dataURL))
            #expect(csv.body == "Push Type,Status,Date (UTC),Count\nliveactivity,delivered,\(today),3\nliveactivity,discarded,\(today),1\n")

            // One channel with three subscribers; the privacy threshold hides a channel below two.
            let channelBody =
                #"{"startDate": "\#(yesterday)", "endDate": "\#(today)", "dataDownloadUrlExpiresInMinutes": 20, "channelId": "\#(channel)"}"#
            let channelCSV = try await Self.export(emulator, "\(path)/broadcastchannelmetrics/request", headers: headers, body: channelBody)
            #expect(channelCSV == "Date (UTC),Broadcasts Published,Broadcasts Delivered,Total Subscriptions\n\(today),2,6,3\n")

            // Apple's refusals.
            let wrongToken = try await emulator.curl.send(
                Curl.Request("POST", "\(path)/deliverymetrics/request", headers: [("x-apple-cloudkit-management-token", "nope")], body: body)
            )
            #expect(wrongToken.status == 401)
            let tooRecent = #"{"startDate": "\#(today)", "endDate": "\#(Self.date(now + 86400))", "dataDownloadUrlExpiresInMinutes": 60}"#
            #expect(
                try await emulator.curl.send(Curl.Request("POST", "\(path)/deliverymetrics/request", headers: headers, body: tooRecent)).status == 400
            )
            let unknownChannel =
                #"{"startDate": "\#(yesterday)", "endDate": "\#(today)", "dataDownloadUrlExpiresInMinutes": 60, "channelId": "bm9uZQ=="}"#
            #expect(
                try await emulator.curl.send(Curl.Request("POST", "\(path)/broadcastchannelmetrics/request", headers: headers, body: unknownChannel))
                    .status
                    == 404
            )
        }
    }

    @Test func aChannelWithTooFewSubscribersReportsMinusOne() async throws {
        try await EmulatorFixture.with({
            $0.dataExportClockOffset = 86400
            $0.dataExportProcessingPolls = 0
            $0.dataExportTokens = [DataExportToken(token: Self.token, teamID: "TEAM123456", bundleID: EmulatorFixture.bundleID)]
        }) { emulator in
            let channel = try await emulator.createChannel()
            let now = Int(Date().timeIntervalSince1970)
            let device = try emulator.emulator.addDevice(
                bundleID: EmulatorFixture.bundleID,
                osVersion: "18.2",
                pushToStartTokens: ["GameAttributes": ""]
            )
            let start =
                #"{"aps": {"timestamp": \#(now), "event": "start", "attributes-type": "GameAttributes", "attributes": {}, "content-state": {}, "alert": {"title": "Go"}, "input-push-channel": "\#(channel)"}}"#
            #expect(try await emulator.devicePush(token: device.pushToStartTokens["GameAttributes"]!, payload: start).status == 200)
            let update = #"{"aps": {"timestamp": \#(now + 1), "event": "update", "content-state": {"home": 1}}}"#
            #expect(try await emulator.broadcast(payload: update, headers: emulator.broadcastHeaders(channelID: channel)).status == 200)
            let headers = [("x-apple-cloudkit-management-token", Self.token)]
            let path = "\(emulator.pushURL)/v1/dataExports/apns/teams/TEAM123456/appId/\(EmulatorFixture.bundleID)/datasetName"
            let body =
                #"{"startDate": "\#(Self.date(now - 86400))", "endDate": "\#(Self.date(now))", "dataDownloadUrlExpiresInMinutes": 60, "channelId": "\#(channel)"}"#
            let csv = try await Self.export(emulator, "\(path)/broadcastchannelmetrics/request", headers: headers, body: body)
            #expect(csv == "Date (UTC),Broadcasts Published,Broadcasts Delivered,Total Subscriptions\n\(Self.date(now)),-1,-1,-1\n")
        }
    }

    /// Requests an export, polls it to its end, and downloads its CSV.
    private static func export(_ emulator: EmulatorFixture, _ url: String, headers: [(String, String)], body: String) async throws -> String {
        let requested = try await emulator.curl.send(Curl.Request("POST", url, headers: headers, body: body))
        let statusURL = try #require(requested.json?["statusUrl"]?.stringValue, "\(requested.body)")
        var dataURL: String?
        for _ in 0..<5 where dataURL == nil {
            dataURL = try await emulator.curl.send(Curl.Request("GET", statusURL, headers: headers)).json?["downloadDetails"]?["dataUrl"]?.stringValue
        }
        return try await emulator.curl.send(Curl.Request("GET", try #require(dataURL))).body
    }

    /// `yyyy-MM-dd` of a time, UTC.
    private static func date(_ seconds: Int) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }
}
