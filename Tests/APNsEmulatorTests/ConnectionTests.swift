import APNsEmulator
import Foundation
import LivecastCore
import LivecastTesting
import Testing

/// Connection behaviour: the stream limit before and after authentication, and injected faults.
@Suite struct ConnectionTests {
    private func allChannels(_ fixture: EmulatorFixture) -> Curl.Request {
        .init(
            "GET",
            "\(fixture.managementURL)/1/apps/\(EmulatorFixture.bundleID)/all-channels",
            headers: [("authorization", "bearer \(fixture.token)")]
        )
    }

    @Test func oneStreamUntilTheFirstAuthenticatedRequest() async throws {
        try await EmulatorFixture.with({ $0.maximumConcurrentStreams = 250 }) { fixture in
            let url = "\(fixture.managementURL)/1/apps/\(EmulatorFixture.bundleID)/all-channels"
            let authenticated = try await ExternalProcess.run("nghttp", ["-nv", "-H", "authorization: bearer \(fixture.token)", url])
            #expect(authenticated.status == 0)
            // nghttp prints the limits it sends too; only the received SETTINGS frames count.
            let received = self.receivedStreamLimits(authenticated.stdout)
            #expect(received == [1, 250])
            let unauthenticated = try await ExternalProcess.run("nghttp", ["-v", url])
            #expect(self.receivedStreamLimits(unauthenticated.stdout) == [1])
            #expect(unauthenticated.stdout.contains("MissingProviderToken"))
        }
    }

    /// `MAX_CONCURRENT_STREAMS` of each SETTINGS frame nghttp received.
    private func receivedStreamLimits(_ output: String) -> [Int] {
        var limits: [Int] = []
        var inReceivedSettings = false
        for line in output.split(separator: "\n") {
            if line.contains("recv SETTINGS frame") {
                inReceivedSettings = true
            } else if line.contains(" frame ") {
                inReceivedSettings = false
            } else if inReceivedSettings, let range = line.range(of: "SETTINGS_MAX_CONCURRENT_STREAMS(0x03):") {
                limits.append(Int(line[range.upperBound...].prefix { $0.isNumber }) ?? -1)
            }
        }
        return limits
    }

    @Test func scriptedStatusesComeInOrderThenNormalService() async throws {
        let script = [
            FaultAnswer.status(429, reason: "TooManyRequests"), .status(500, reason: "InternalServerError"),
            .status(503, reason: "ServiceUnavailable"),
        ]
        try await EmulatorFixture.with({ $0.faults.script = script }) { fixture in
            let responses = try await fixture.curl.send(Array(repeating: self.allChannels(fixture), count: 4))
            #expect(responses.map(\.status) == [429, 500, 503, 200])
            #expect(responses.map(\.reason) == ["TooManyRequests", "InternalServerError", "ServiceUnavailable", nil])
        }
    }

    @Test func aShareOfFailuresCanBeChangedWhileRunning() async throws {
        try await EmulatorFixture.with({
            $0.faults.failureShare = 1
            $0.faults.failureAnswers = [.status(503, reason: "Shutdown")]
        }) { fixture in
            let failing = try await fixture.curl.send(Array(repeating: self.allChannels(fixture), count: 3))
            #expect(failing.map(\.status) == [503, 503, 503])
            #expect(failing.allSatisfy { $0.reason == "Shutdown" })
            let (status, plan) = try await fixture.control("PUT", "faults", body: #"{"script": ["429"]}"#)
            #expect(status == 200)
            #expect(plan["failureShare"] == .int(0))
            let healed = try await fixture.curl.send(Array(repeating: self.allChannels(fixture), count: 2))
            #expect(healed.map(\.status) == [429, 200])
            let (badStatus, _) = try await fixture.control("PUT", "faults", body: #"{"script": ["hello"]}"#)
            #expect(badStatus == 400)
        }
    }

    @Test func scriptedGoAwayCarriesAJSONReason() async throws {
        try await EmulatorFixture.with({ $0.faults.script = [.goAway(reason: "Shutdown")] }) { fixture in
            let url = "\(fixture.managementURL)/1/apps/\(EmulatorFixture.bundleID)/all-channels"
            let result = try await ExternalProcess.run("nghttp", ["-nv", "-H", "authorization: bearer \(fixture.token)", url])
            #expect(result.stdout.contains("recv GOAWAY frame"))
            #expect(result.stdout.contains(#"{"reason":"Shutdown"}"#))
            #expect(!result.stdout.contains("recv HEADERS frame"))
            // The script is spent: the next connection is served.
            #expect(try await fixture.curl.send(self.allChannels(fixture)).status == 200)
        }
    }

    @Test func scriptedDropClosesWithoutAnswer() async throws {
        try await EmulatorFixture.with({ $0.faults.script = [.drop] }) { fixture in
            let dropped = try await fixture.curl.send(self.allChannels(fixture))
            #expect(dropped.status == 0)
            #expect(try await fixture.curl.send(self.allChannels(fixture)).status == 200)
        }
    }

    @Test func withoutAFaultTheConnectionIsReused() async throws {
        try await EmulatorFixture.with { fixture in
            let responses = try await fixture.curl.send([self.allChannels(fixture), self.allChannels(fixture)], pause: 1)
            #expect(responses.map(\.newConnections) == [1, 0])
        }
    }
}
