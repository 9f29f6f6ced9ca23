import APNs
import APNsEmulator
import Foundation
import LivecastCore
import LivecastTesting
import LocalPostgres
import Testing

/// The client against the emulator over real TLS + HTTP/2: each outcome class, tokens, channels.
@Suite struct APNsClientTests {
    @Test func deliveredPushReachesTheDevice() async throws {
        try await ClientFixture.with { fixture in
            let (deviceID, token) = try fixture.device()
            let apnsID = try #require(UUID(uuidString: "5e0b6a4c-1f2d-4c3b-9a8e-7d6c5b4a3f2e"))
            let outcome = await fixture.client.send(
                DevicePush(
                    deviceToken: token,
                    bundleID: ClientFixture.bundleID,
                    payload: ClientFixture.start(),
                    expiration: .immediately,
                    apnsID: apnsID,
                    collapseID: "game"
                )
            )
            #expect(outcome.status == 200)
            #expect(outcome.classification == .delivered)
            #expect(outcome.apnsID == apnsID)
            #expect(outcome.apnsUniqueID != nil)
            #expect(outcome.attempts == 1)
            #expect(fixture.emulator.emulator.device(id: deviceID)?.activities.count == 1)
        }
    }

    @Test func deadTokensAreClassifiedTokenInvalid() async throws {
        let unregistered = String(repeating: "ab", count: 32)
        try await ClientFixture.with(emulator: { $0.faults.unregisteredTokens = [unregistered: 1_700_000_000_500] }) { fixture in
            let gone = await fixture.client.send(
                DevicePush(deviceToken: unregistered, bundleID: ClientFixture.bundleID, payload: ClientFixture.update())
            )
            #expect(gone.status == 410)
            #expect(gone.reason == .unregistered)
            #expect(gone.invalidSince == 1_700_000_000_500)
            #expect(gone.classification == .tokenInvalid)
            let unknown = await fixture.client.send(
                DevicePush(deviceToken: "abcd", bundleID: ClientFixture.bundleID, payload: ClientFixture.update())
            )
            #expect(unknown.reason == .badDeviceToken)
            #expect(unknown.classification == .tokenInvalid)
        }
    }

    @Test func throttlingAndServerErrorsAreRetryLater() async throws {
        let script: [FaultAnswer] = [
            .status(429, reason: "TooManyRequests"), .status(503, reason: "ServiceUnavailable"), .status(500, reason: "InternalServerError"),
        ]
        try await ClientFixture.with(emulator: {
            $0.faults.script = script
            $0.acceptsUnknownTokens = true
        }) { fixture in
            var reasons: [APNsReason?] = []
            for _ in script {
                let outcome = await fixture.client.send(
                    DevicePush(deviceToken: "abcd", bundleID: ClientFixture.bundleID, payload: ClientFixture.update())
                )
                #expect(outcome.classification == .retryLater)
                reasons.append(outcome.reason)
            }
            #expect(reasons == [.tooManyRequests, .serviceUnavailable, .internalServerError])
        }
    }

    @Test func badRequestsMustBeFixed() async throws {
        try await ClientFixture.with(emulator: { $0.acceptsUnknownTokens = true }) { fixture in
            let large = Array(#"{"aps":{"p":"\#(String(repeating: "x", count: 4100))"}}"#.utf8)
            let tooLarge = await fixture.client.send(DevicePush(deviceToken: "abcd", bundleID: ClientFixture.bundleID, payload: large))
            #expect(tooLarge.status == 413)
            #expect(tooLarge.reason == .payloadTooLarge)
            #expect(tooLarge.classification == .requestMustBeFixed)
            // A priority APNs does not take cannot be made (`APNsPriority`); a collapse id over 64 bytes can.
            #expect(APNsPriority(rawValue: 7) == nil)
            let badCollapseID = await fixture.client.send(
                DevicePush(
                    deviceToken: "abcd",
                    bundleID: ClientFixture.bundleID,
                    payload: ClientFixture.update(),
                    collapseID: String(repeating: "c", count: 65)
                )
            )
            #expect(badCollapseID.reason == .badCollapseId)
            #expect(badCollapseID.classification == .requestMustBeFixed)
        }
    }

    @Test func refusedCredentialsAreACredentialsProblem() async throws {
        try await EmulatorFixture.with { emulator in
            let stranger = try await ProviderKey.make()
            var configuration = APNsClient.Configuration()
            configuration.pushEndpoint = .init(host: "localhost", port: emulator.emulator.pushPort)
            configuration.additionalTrustRootFiles = [emulator.curl.caFile]
            configuration.requestTimeout = .seconds(60)  // the whole suite shares two cores
            let client = try APNsClient(
                configuration: configuration,
                credentials: try APNsCredentials(teamID: stranger.teamID, keyID: stranger.keyID, p8File: stranger.path)
            )
            let outcome = await client.send(DevicePush(deviceToken: "abcd", bundleID: ClientFixture.bundleID, payload: ClientFixture.update()))
            await client.shutdown()
            #expect(outcome.status == 403)
            #expect(outcome.reason == .invalidProviderToken)
            #expect(outcome.classification == .credentialsProblem)
        }
    }

    @Test func expiredProviderTokenIsReSignedOnceWhenTwentyMinutesOld() async throws {
        // The client's clock runs 4,000 s behind, so its tokens look expired to the emulator.
        let clock = ManualWallClock(start: Int(Date().timeIntervalSince1970) - 4000)
        try await ClientFixture.with(emulator: { $0.acceptsUnknownTokens = true }, clock: clock) { fixture in
            let push = DevicePush(deviceToken: "abcd", bundleID: ClientFixture.bundleID, payload: ClientFixture.update())
            // The token is brand new by the client's clock: no re-signing yet, the answer stands.
            let refused = await fixture.client.send(push)
            #expect(refused.reason == .expiredProviderToken)
            #expect(refused.classification == .credentialsProblem)
            // Twenty minutes later (iat now 2,740 s old for the emulator) the client re-signs and retries once.
            clock.advance(by: 21 * 60)
            let delivered = await fixture.client.send(push)
            #expect(delivered.status == 200)
            #expect(delivered.attempts == 2)
        }
    }

    @Test func channelsAndBroadcasts() async throws {
        try await ClientFixture.with { fixture in
            let created = await fixture.client.createChannel(bundleID: ClientFixture.bundleID, storagePolicy: .mostRecentMessageStored)
            #expect(created.status == 201)
            let channelID = try #require(created.channelID)
            let read = await fixture.client.readChannel(bundleID: ClientFixture.bundleID, channelID: channelID)
            #expect(read.status == 200)
            #expect(String(decoding: read.body, as: UTF8.self).contains(#""message-storage-policy":1"#))
            let (channels, listed) = await fixture.client.listChannels(bundleID: ClientFixture.bundleID)
            #expect(listed.isSuccess)
            #expect(channels == [channelID])

            let (deviceID, token) = try fixture.device()
            var start = String(decoding: ClientFixture.start(), as: UTF8.self)
            start = start.replacingOccurrences(of: #""input-push-token":1"#, with: #""input-push-channel":"\#(channelID)""#)
            #expect(await fixture.client.send(DevicePush(deviceToken: token, bundleID: ClientFixture.bundleID, payload: Array(start.utf8))).isSuccess)
            let expiration = Int(Date().timeIntervalSince1970) + 3600
            let broadcast = await fixture.client.broadcast(
                BroadcastPush(
                    channelID: channelID,
                    bundleID: ClientFixture.bundleID,
                    payload: ClientFixture.update(Int(Date().timeIntervalSince1970) + 5, home: 4),
                    expiration: .timeIntervalSince1970InSeconds(expiration)
                )
            )
            #expect(broadcast.status == 200)
            #expect(broadcast.requestID != nil)
            #expect(fixture.emulator.emulator.device(id: deviceID)?.activities.first?.contentState == .object(["home": .int(4)]))

            let deleted = await fixture.client.deleteChannel(bundleID: ClientFixture.bundleID, channelID: channelID)
            #expect(deleted.status == 204)
            let gone = await fixture.client.broadcast(
                BroadcastPush(channelID: channelID, bundleID: ClientFixture.bundleID, payload: ClientFixture.update())
            )
            #expect(gone.reason == .channelNotRegistered)
            #expect(gone.classification == .requestMustBeFixed)
        }
    }

    @Test func unreachableServerFailsByTheDeadlineWithTheCause() async throws {
        var configuration = APNsClient.Configuration()
        configuration.pushEndpoint = .init(host: "127.0.0.1", port: try FreePort.next())
        configuration.requestTimeout = .seconds(3)
        let key = try await ProviderKey.make()
        let client = try APNsClient(
            configuration: configuration,
            credentials: try APNsCredentials(teamID: key.teamID, keyID: key.keyID, p8File: key.path)
        )
        let outcome = await client.send(DevicePush(deviceToken: "abcd", bundleID: ClientFixture.bundleID, payload: ClientFixture.update()))
        await client.shutdown()
        #expect(outcome.status == nil)
        #expect(outcome.classification == .retryLater)
        #expect(outcome.transportError?.code == .deadlineExceeded)
        #expect(outcome.transportError?.message.contains("refused") == true)
    }

    @Test func endpointsParseFromURLs() {
        #expect(APNsClient.Endpoint(url: "https://localhost:2197") == .init(host: "localhost", port: 2197))
        #expect(APNsClient.Endpoint(url: "https://api.push.apple.com") == .init(host: "api.push.apple.com", port: 443))
        #expect(APNsClient.Endpoint(url: "https://[::1]:8443/") == .init(host: "::1", port: 8443))
        #expect(APNsClient.Endpoint(url: "http://localhost:2197") == nil)
        #expect(APNsClient.Endpoint(url: "https://host:99999") == nil)
        #expect(APNsClient.Configuration(environment: .production).managementEndpoint.port == 2196)
    }
}
