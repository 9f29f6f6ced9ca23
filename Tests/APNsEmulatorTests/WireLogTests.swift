import APNsEmulator
import Foundation
import LivecastCore
import LivecastTesting
import Testing

/// The emulator's wire log through TLS + HTTP/2 (curl): every device push and broadcast in arrival order, faults
/// included, from the Swift API and `GET /emulator/wire`.
@Suite struct WireLogTests {
    static let now = Int(Date().timeIntervalSince1970)

    static func update(_ timestamp: Int, home: Int) -> String {
        #"{"aps":{"timestamp":\#(timestamp),"event":"update","content-state":{"home":\#(home), "away":0}}}"#
    }

    /// `{"records": [...]}` from `GET /emulator/wire`.
    private struct WireAnswer: Decodable {
        var records: [WireRecord]
    }

    private func fetch(_ fixture: EmulatorFixture, _ query: String = "") async throws -> [WireRecord] {
        let response = try await fixture.curl.send(Curl.Request("GET", "\(fixture.pushURL)/emulator/wire\(query)"))
        #expect(response.status == 200, "\(response.body)")
        return try JSONDecoder().decode(WireAnswer.self, from: Data(response.body.utf8)).records
    }

    @Test func faultedAndAcceptedPushesAreRecordedInArrivalOrder() async throws {
        let script: [FaultAnswer] = [.status(503, reason: "ServiceUnavailable"), .pass, .pass, .drop, .goAway(reason: "Shutdown")]
        try await EmulatorFixture.with({
            $0.recordsWire = true
            $0.acceptsUnknownTokens = true
            $0.faults.script = script
        }) { fixture in
            let token = String(repeating: "AB", count: 32)
            let target = "device:" + token.lowercased()
            let first = Self.update(Self.now + 1, home: 1)
            let pushes = [first, first, Self.update(Self.now + 2, home: 2), Self.update(Self.now + 3, home: 3), Self.update(Self.now + 4, home: 4)]
            let before = Date().timeIntervalSince1970
            var statuses: [Int] = []
            for payload in pushes.dropLast() {
                statuses.append(try await fixture.devicePush(token: token, payload: payload).status)
            }
            #expect(statuses == [503, 200, 200, 0])
            // nghttp rather than curl, which would retry a request refused by GOAWAY on a new connection.
            let headers = fixture.deviceHeaders().flatMap { ["-H", "\($0.0): \($0.1)"] }
            let goAway = try await ExternalProcess.run(
                "nghttp",
                ["-nv", "-d", "-"] + headers + ["\(fixture.pushURL)/3/device/\(token)"],
                stdin: pushes[4]
            )
            #expect(goAway.stdout.contains("recv GOAWAY frame"))
            #expect(!goAway.stdout.contains("recv HEADERS frame"))
            let after = Date().timeIntervalSince1970

            let records = fixture.emulator.wireRecords
            #expect(records.map(\.sequence) == [0, 1, 2, 3, 4])
            #expect(records.map(\.status) == [503, 200, 200, nil, nil])
            #expect(records.map(\.reason) == ["ServiceUnavailable", nil, nil, nil, nil])
            #expect(records.allSatisfy { $0.target == target })
            #expect(records.map(\.timestamp) == [1, 1, 2, 3, 4].map { Self.now + $0 })
            #expect(records.map(\.event) == Array(repeating: "update", count: 5))
            #expect(records[2].contentState == #"{"away":0,"home":2}"#)
            #expect(records[0].bodyDigest == records[1].bodyDigest)
            #expect(Set(records.map(\.bodyDigest)).count == 4)
            #expect(records.allSatisfy { $0.bodyDigest.count == 64 && $0.bodyDigest.allSatisfy { "0123456789abcdef".contains($0) } })
            #expect(records.allSatisfy { before <= $0.arrivedAt && $0.arrivedAt <= after })
            #expect(records.prefix(3).allSatisfy { $0.answeredAt.map { $0 >= records[0].arrivedAt && $0 <= after } == true })
            #expect(records.suffix(2).allSatisfy { $0.answeredAt == nil })
            #expect(zip(records, records.dropFirst()).allSatisfy { $0.arrivedAt <= $1.arrivedAt })

            let verdict = WireJudge.judge(records)
            #expect(verdict.isClean, "\(verdict)")
            #expect(verdict.requests == 5)
            #expect(verdict.accepted == 2)
            #expect(verdict.wastedPushes == 0)
            #expect(verdict.lastAccepted[target]?.sequence == 2)
        }
    }

    /// A drop ends the connection at the request it answers, not before: requests answered earlier on the connection
    /// got their answers, so every status in the log is one the client read. (Answers still in nghttp2's buffer were
    /// lost with the connection while the log said they were sent: the game night's judge then saw a retry of an
    /// answered `410` as a push after it.)
    @Test func answersMadeBeforeADropReachTheClient() async throws {
        try await EmulatorFixture.with({
            $0.recordsWire = true
            $0.acceptsUnknownTokens = true
            $0.faults.script = [.pass, .pass, .pass, .drop]
        }) { fixture in
            let body = FileManager.default.temporaryDirectory.appendingPathComponent("drop-\(UUID().uuidString).json")
            try Data(Self.update(Self.now + 1, home: 1).utf8).write(to: body)
            defer { try? FileManager.default.removeItem(at: body) }
            // nghttp sends the four requests at once on one connection, so the emulator reads them together.
            let headers = fixture.deviceHeaders().flatMap { ["-H", "\($0.0): \($0.1)"] }
            let urls = (1...4).map { "\(fixture.pushURL)/3/device/\(String(repeating: "C\($0)", count: 32))" }
            let result = try await ExternalProcess.run("nghttp", ["-nv", "-d", body.path] + headers + urls)

            let records = fixture.emulator.wireRecords
            #expect(records.map(\.status) == [200, 200, 200, nil])
            let answersRead = result.stdout.components(separatedBy: ":status: 200").count - 1
            #expect(answersRead == 3, "the client read \(answersRead) of the 3 answers the log records:\n\(result.stdout)")
        }
    }

    /// The device shows the newest score whatever the order, so only the wire shows the late, older push.
    @Test func theJudgeSeesWhatTheDeviceForgives() async throws {
        try await EmulatorFixture.with({ $0.recordsWire = true }) { fixture in
            let device = try await fixture.addDevice()
            let deviceID = try #require(device["id"]?.stringValue)
            let pushToStart = try #require(device["pushToStartTokens"]?["GameAttributes"]?.stringValue)
            #expect(try await fixture.devicePush(token: pushToStart, payload: DeviceModelTests.start(timestamp: Self.now)).status == 200)
            let token = try #require(try await fixture.device(deviceID)["activities"].items.first?["updateToken"]?.stringValue)
            for payload in [Self.update(Self.now + 10, home: 3), Self.update(Self.now + 5, home: 1)] {
                #expect(try await fixture.devicePush(token: token, payload: payload).status == 200)
            }
            #expect(try await fixture.device(deviceID)["activities"].items.first?["contentState"]?["home"] == .int(3))

            let verdict = WireJudge.judge(fixture.emulator.wireRecords)
            #expect(verdict.requests == 3)
            #expect(verdict.orderingViolations.map(\.record.target) == ["device:\(token)"])
            #expect(verdict.orderingViolations.map(\.record.timestamp) == [Self.now + 5])
            #expect(verdict.wastedPushes == 1)
            #expect(verdict.lastAccepted["device:\(pushToStart)"]?.event == "start")
        }
    }

    @Test func pushesAfter410AreFlagged() async throws {
        let token = String(repeating: "0f", count: 32)
        try await EmulatorFixture.with({
            $0.recordsWire = true
            $0.faults.unregisteredTokens = [token: 1_700_000_000_123]
        }) { fixture in
            for timestamp in [Self.now + 1, Self.now + 2] {
                let response = try await fixture.devicePush(token: token, payload: Self.update(timestamp, home: 1))
                #expect(response.status == 410)
            }
            let records = fixture.emulator.wireRecords
            #expect(records.map(\.status) == [410, 410])
            #expect(records.map(\.reason) == ["Unregistered", "Unregistered"])
            #expect(WireJudge.judge(records).sentAfterUnregistered.map(\.record.sequence) == [1])
        }
    }

    @Test func broadcastsAreRecordedByChannelAndChannelManagementIsNot() async throws {
        try await EmulatorFixture.with({ $0.recordsWire = true }) { fixture in
            let channel = try await fixture.createChannel(storagePolicy: 0)
            for timestamp in [Self.now + 1, Self.now + 2] {
                let response = try await fixture.broadcast(
                    payload: Self.update(timestamp, home: 1),
                    headers: fixture.broadcastHeaders(channelID: channel)
                )
                #expect(response.status == 200)
            }
            let records = fixture.emulator.wireRecords
            #expect(records.map(\.target) == ["channel:\(channel)", "channel:\(channel)"])
            #expect(records.map(\.timestamp) == [Self.now + 1, Self.now + 2])
            #expect(records.map(\.status) == [200, 200])
            #expect(WireJudge.judge(records).isClean)
        }
    }

    @Test func theControlPlaneServesAndClearsTheLog() async throws {
        try await EmulatorFixture.with({
            $0.recordsWire = true
            $0.acceptsUnknownTokens = true
        }) { fixture in
            for timestamp in [Self.now + 1, Self.now + 2, Self.now + 3] {
                #expect(try await fixture.devicePush(token: "abcd", payload: Self.update(timestamp, home: 1)).status == 200)
            }
            let all = try await self.fetch(fixture)
            #expect(all == fixture.emulator.wireRecords)
            #expect(all.map(\.timestamp) == [Self.now + 1, Self.now + 2, Self.now + 3])
            #expect(try await self.fetch(fixture, "?after=0").map(\.sequence) == [1, 2])
            #expect(try await self.fetch(fixture, "?after=2").isEmpty)
            #expect(fixture.emulator.wireRecords(after: 1).map(\.sequence) == [2])
            #expect(try await fixture.control("GET", "wire?after=soon").status == 400)

            let (status, cleared) = try await fixture.control("DELETE", "wire")
            #expect(status == 200)
            #expect(cleared["cleared"] == .int(3))
            #expect(try await self.fetch(fixture).isEmpty)
            #expect(try await fixture.devicePush(token: "abcd", payload: Self.update(Self.now + 4, home: 1)).status == 200)
            #expect(try await self.fetch(fixture).map(\.sequence) == [3], "sequences keep counting after a clear")
            fixture.emulator.clearWireRecords()
            #expect(fixture.emulator.wireRecords.isEmpty)
        }
    }

    @Test func nothingIsRecordedWhenRecordingIsOff() async throws {
        try await EmulatorFixture.with({ $0.acceptsUnknownTokens = true }) { fixture in
            #expect(fixture.emulator.configuration.recordsWire == false)
            let response = try await fixture.devicePush(token: "abcd", payload: Self.update(Self.now, home: 1))
            #expect(response.status == 200)
            #expect(fixture.emulator.wireRecords.isEmpty)
            let fetched = try await self.fetch(fixture)
            #expect(fetched.isEmpty)
        }
    }
}
