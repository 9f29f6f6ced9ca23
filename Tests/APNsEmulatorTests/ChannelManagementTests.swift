import APNsEmulator
import Foundation
import LivecastCore
import LivecastTesting
import Testing

/// Channel management on its own port: `/1/apps/{bundleId}/channels` and `/all-channels`.
@Suite struct ChannelManagementTests {
    private func request(
        _ fixture: EmulatorFixture,
        _ method: String,
        path: String = "channels",
        channelID: String? = nil,
        body: String? = nil,
        extra: [(String, String)] = []
    ) -> Curl.Request {
        var headers = [("authorization", "bearer \(fixture.token)")] + extra
        if let channelID { headers.append(("apns-channel-id", channelID)) }
        return .init(method, "\(fixture.managementURL)/1/apps/\(EmulatorFixture.bundleID)/\(path)", headers: headers, body: body)
    }

    @Test func createReadListDelete() async throws {
        try await EmulatorFixture.with { fixture in
            let requestID = "6e1a3b2c-4d5e-4f60-8a7b-9c0d1e2f3a4b"
            let created = try await fixture.curl.send(
                self.request(
                    fixture,
                    "POST",
                    body: #"{"message-storage-policy": 1, "push-type": "LiveActivity"}"#,
                    extra: [("apns-request-id", requestID)]
                )
            )
            #expect(created.status == 201)
            #expect(created.body.isEmpty)
            #expect(created.headers["apns-request-id"] == requestID)
            let id = try #require(created.headers["apns-channel-id"])
            #expect(Data(base64Encoded: id) != nil)
            let other = try await fixture.createChannel(storagePolicy: 0)
            #expect(other != id)

            let read = try await fixture.curl.send(self.request(fixture, "GET", channelID: id))
            #expect(read.status == 200)
            #expect(read.json == .object(["message-storage-policy": .int(1), "push-type": .string("LiveActivity")]))
            #expect(UUID(uuidString: read.headers["apns-request-id"] ?? "") != nil)

            let list = try await fixture.curl.send(self.request(fixture, "GET", path: "all-channels"))
            #expect(list.status == 200)
            #expect(
                Set(
                    list.json?["channels"].flatMap { value -> [String]? in
                        guard case .array(let ids) = value else { return nil }
                        return ids.compactMap(\.stringValue)
                    } ?? []
                ) == [id, other]
            )

            let deleted = try await fixture.curl.send(self.request(fixture, "DELETE", channelID: id))
            #expect(deleted.status == 204)
            let readAgain = try await fixture.curl.send(self.request(fixture, "GET", channelID: id))
            #expect(readAgain.status == 400)
            #expect(readAgain.reason == "ChannelNotRegistered")
            let deleteAgain = try await fixture.curl.send(self.request(fixture, "DELETE", channelID: id))
            #expect(deleteAgain.reason == "ChannelNotRegistered")
        }
    }

    @Test func createRequestsAreChecked() async throws {
        try await EmulatorFixture.with { fixture in
            let bodies: [(String?, String)] = [
                (nil, "BadRequestPayload"),
                ("{not json", "BadRequestPayload"),
                (#"{"message-storage-policy": 1}"#, "BadRequestParams"),
                (#"{"message-storage-policy": 2, "push-type": "LiveActivity"}"#, "BadRequestParams"),
                (#"{"message-storage-policy": "1", "push-type": "LiveActivity"}"#, "BadRequestParams"),
                (#"{"message-storage-policy": 1, "push-type": "LiveActivity", "name": "x"}"#, "BadRequestParams"),
                (#"{"message-storage-policy": 1, "push-type": "Alert"}"#, "InvalidPushType"),
            ]
            for (body, reason) in bodies {
                let response = try await fixture.curl.send(self.request(fixture, "POST", body: body))
                #expect(response.status == 400, "\(body ?? "no body")")
                #expect(response.reason == reason, "\(body ?? "no body")")
            }
            let list = try await fixture.curl.send(self.request(fixture, "GET", path: "all-channels"))
            #expect(list.json?["channels"] == .array([]))
        }
    }

    @Test func readAndDeleteNeedAWellFormedChannelID() async throws {
        try await EmulatorFixture.with { fixture in
            for method in ["GET", "DELETE"] {
                let missing = try await fixture.curl.send(self.request(fixture, method))
                #expect(missing.reason == "MissingChannelId")
                let malformed = try await fixture.curl.send(self.request(fixture, method, channelID: "not base64!"))
                #expect(malformed.reason == "BadChannelId")
                let unknown = try await fixture.curl.send(self.request(fixture, method, channelID: "dHN0LXNyY2gtY2hubA=="))
                #expect(unknown.reason == "ChannelNotRegistered")
            }
        }
    }

    @Test func channelCapIsEnforced() async throws {
        try await EmulatorFixture.with({ $0.channelLimit = 2 }) { fixture in
            _ = try await fixture.createChannel()
            let second = try await fixture.createChannel()
            let third = try await fixture.curl.send(
                self.request(fixture, "POST", body: #"{"message-storage-policy": 0, "push-type": "LiveActivity"}"#)
            )
            #expect(third.status == 400)
            #expect(third.reason == "CannotCreateChannelConfig")
            // Deleting one frees a place; ids are never reissued.
            #expect(try await fixture.curl.send(self.request(fixture, "DELETE", channelID: second)).status == 204)
            #expect(try await fixture.createChannel() != second)
        }
    }

    @Test func pathsMethodsTopicsAndCapability() async throws {
        try await EmulatorFixture.with({ $0.broadcastDisabledBundleIDs = ["com.example.nobroadcast"] }) { fixture in
            let auth = [("authorization", "bearer \(fixture.token)")]
            let base = "\(fixture.managementURL)/1/apps"
            let cases: [(Curl.Request, Int, String)] = [
                (.init("GET", "\(base)/\(EmulatorFixture.bundleID)/channel", headers: auth), 404, "BadPath"),
                (.init("PUT", "\(base)/\(EmulatorFixture.bundleID)/channels", headers: auth), 405, "MethodNotAllowed"),
                (.init("POST", "\(base)/\(EmulatorFixture.bundleID)/all-channels", headers: auth), 405, "MethodNotAllowed"),
                (.init("GET", "\(base)/\(EmulatorFixture.topic)/all-channels", headers: auth), 400, "TopicDisallowed"),
                (.init("GET", "\(base)/com.example.nobroadcast/all-channels", headers: auth), 400, "FeatureNotEnabled"),
                (.init("GET", "\(base)/\(EmulatorFixture.bundleID)/all-channels"), 403, "MissingProviderToken"),
                (
                    .init("GET", "\(base)/\(EmulatorFixture.bundleID)/all-channels", headers: auth + [("apns-request-id", "nope")]), 400,
                    "BadMessageId"
                ),
                // Device pushes belong to the push port.
                (.init("POST", "\(fixture.managementURL)/3/device/abcd", headers: auth, body: "{}"), 404, "BadPath"),
            ]
            for (request, status, reason) in cases {
                let response = try await fixture.curl.send(request)
                #expect(response.status == status, "\(request.method) \(request.url)")
                #expect(response.reason == reason, "\(request.method) \(request.url)")
                #expect(response.headers["apns-request-id"] != nil)
            }
        }
    }
}
