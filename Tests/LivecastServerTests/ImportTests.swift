import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastStore
import LivecastTesting
import NIOCore
import PostgresNIO
import Testing

/// `POST …/push-to-start-tokens:import` and `POST …/activities:import`: rows registered or refused one by one.
@Suite struct ImportTests {
    private let tokensPath = "/v1/apps/com.example.game/push-to-start-tokens:import"
    private let activitiesPath = "/v1/apps/com.example.game/activities:import"

    @Test func aJSONArrayOfGoodAndBadRowsIsAnsweredRowByRow() async throws {
        try await APIFixture.with("import_mixed") { fixture, client in
            let key = fixture.key(.backend)
            let single = "/v1/apps/com.example.game/push-to-start-tokens/"
            #expect(try await client.send(.put, single + "kept/GameAttributes", key: key, body: #"{"token": "a0"}"#).status == .created)
            #expect(try await client.send(.put, single + "held/GameAttributes", key: key, body: #"{"token": "c0"}"#).status == .created)
            let body = """
                [{"deviceId": "new", "attributesType": "GameAttributes", "token": "A1", "userId": "u1", "osVersion": "17.5"},
                 {"deviceId": "kept", "attributesType": "GameAttributes", "token": "a0", "frequentUpdatesEnabled": false},
                 {"deviceId": "bad", "attributesType": "GameAttributes", "token": "xyz"},
                 {"attributesType": "GameAttributes", "token": "b1"},
                 {"deviceId": "thief", "attributesType": "GameAttributes", "token": "c0"},
                 {"deviceId": "", "attributesType": "GameAttributes", "token": "b2"},
                 {"deviceId": "twice", "attributesType": "GameAttributes", "token": "d1"},
                 {"deviceId": "twice", "attributesType": "GameAttributes", "token": "d2"},
                 "not a row",
                 {"deviceId": "nul", "attributesType": "GameAttributes", "token": "e1", "userId": "\\u0000"}]
                """
            let response = try await client.send(.post, self.tokensPath, key: key, body: body)
            #expect(response.status == .ok, "\(response.text)")
            #expect(
                Self.results(response) == [
                    "0 created", "1 unchanged", "2 422 invalid token", "3 400 malformed_request deviceId", "4 moved",
                    "5 422 invalid deviceId", "6 created", "7 rotated", "8 400 malformed_request -", "9 422 invalid userId",
                ]
            )
            #expect(
                response.json["counts"]
                    == .object(["created": .int(2), "rotated": .int(1), "unchanged": .int(1), "moved": .int(1), "failed": .int(5)])
            )
            #expect(try await fixture.store.rows(device: "new").map { "\($0.token) \($0.live)" } == ["a1 true"])
            #expect(try await fixture.store.rows(device: "twice").map { "\($0.token) \($0.live)" } == ["d1 false", "d2 true"])
            #expect(try await fixture.store.rows(device: "thief").map { "\($0.token) \($0.live)" } == ["c0 true"], "holding the token is the proof")
            let kept = try await fixture.client.query("SELECT frequent_updates_enabled FROM push_to_start_tokens WHERE device_id = 'kept'")
            for try await frequent in kept.decode(Bool.self) { #expect(!frequent, "an unchanged row's details are updated") }
            #expect(try await fixture.count("push_to_start_tokens") == 5)
        }
    }

    @Test func ndjsonLinesAreRowsAndAMalformedLineIsOnlyItsOwnError() async throws {
        try await APIFixture.with("import_ndjson") { fixture, client in
            let body = """
                {"deviceId": "one", "attributesType": "GameAttributes", "token": "01"}\r
                {"deviceId": "two", "attributesType": "GameAttributes", "token":
                {"deviceId": "three", "attributesType": "GameAttributes", "token": "03"}

                {"deviceId": "five", "attributesType": "GameAttributes", "token": "05"}
                {"deviceId": "six", "attributesType": "GameAttributes", "token": "06", "userId": [1
                2]}

                """
            let response = try await client.send(.post, self.tokensPath, key: fixture.key(.backend), body: body, contentType: "application/x-ndjson")
            #expect(response.status == .ok, "\(response.text)")
            // The last two lines would make one row if joined: each is its own malformed row.
            #expect(
                Self.results(response) == [
                    "0 created", "1 400 malformed_request -", "2 created", "3 400 malformed_request -", "4 created",
                    "5 400 malformed_request -", "6 400 malformed_request -",
                ]
            )
            #expect(try await fixture.count("push_to_start_tokens") == 3)
            // Two malformed lines that, joined into one array, would read as two good rows.
            let shifted = """
                {"deviceId": "seven", "attributesType": "GameAttributes", "token": "07", "extra": [1
                2], "userId": "u"}, {"deviceId": "eight", "attributesType": "GameAttributes", "token": "08"}
                """
            let answer = try await client.send(.post, self.tokensPath, key: fixture.key(.backend), body: shifted, contentType: "application/x-ndjson")
            #expect(Self.results(answer) == ["0 400 malformed_request -", "1 400 malformed_request -"])
            #expect(try await fixture.count("push_to_start_tokens") == 3)

            let refusals: [(body: String, contentType: String, status: HTTPResponse.Status, code: String)] = [
                (#"[{"deviceId": "six", "attributesType": "G", "token": "06"},"#, "application/json", .badRequest, "malformed_request"),
                (#"{"deviceId": "six", "attributesType": "G", "token": "06"}"#, "application/json", .badRequest, "malformed_request"),
                // The array's structure holds, but a row is not JSON: refused whole, the good row before it included.
                (
                    #"[{"deviceId": "six", "attributesType": "G", "token": "06"}, {"deviceId": "seven" "token": "07"}]"#, "application/json",
                    .badRequest, "malformed_request"
                ),
                (#"[{"deviceId": "six", "attributesType": "G", "token": "06"}, tru]"#, "application/json", .badRequest, "malformed_request"),
                (
                    #"[{"deviceId": "six", "attributesType": "G", "token": "06"}, {"deviceId": "seven"]]"#, "application/json", .badRequest,
                    "malformed_request"
                ),
                ("[]", "text/csv", .unsupportedMediaType, "unsupported_media_type"),
            ]
            for refusal in refusals {
                let response = try await client.send(
                    .post,
                    self.tokensPath,
                    key: fixture.key(.backend),
                    body: refusal.body,
                    contentType: refusal.contentType
                )
                #expect(response.status == refusal.status, "\(refusal.body)")
                #expect(response.errorCode == refusal.code, "\(refusal.body)")
            }
            #expect(try await fixture.count("push_to_start_tokens") == 3)
        }
    }

    @Test func tenThousandRowsAreTakenAndOneMoreIsRefusedWhole() async throws {
        try await APIFixture.with("import_limit") { fixture, client in
            func rows(_ count: Int) -> String {
                (0..<count).map { #"{"deviceId": "device-\#($0)", "attributesType": "GameAttributes", "token": "\#(String(format: "%08x", $0))"}"# }
                    .joined(separator: "\n")
            }
            let tooMany = try await client.send(
                .post,
                self.tokensPath,
                key: fixture.key(.backend),
                body: rows(10_001),
                contentType: "application/x-ndjson"
            )
            #expect(tooMany.status == .contentTooLarge)
            #expect(tooMany.errorCode == "too_many_rows")
            #expect(try await fixture.count("push_to_start_tokens") == 0)
            let tooLarge = try await client.send(
                .post,
                self.tokensPath,
                key: fixture.key(.backend),
                body: "[" + String(repeating: " ", count: 16 * 1024 * 1024) + "]"
            )
            #expect(tooLarge.status == .contentTooLarge)
            #expect(tooLarge.errorCode == "payload_too_large")
            let allowed = try await client.send(
                .post,
                self.tokensPath,
                key: fixture.key(.backend),
                body: rows(10_000),
                contentType: "application/x-ndjson"
            )
            #expect(allowed.status == .ok)
            #expect(allowed.json["counts"]?["created"]?.intValue == 10_000)
            #expect(try await fixture.count("push_to_start_tokens") == 10_000)
        }
    }

    /// The database goes away during the second batch of an import (a trigger terminates the connection that inserts
    /// one row of it): the answer is a 503 that says how far the import got, not "nothing was changed", and the first
    /// batch stays imported.
    @Test func anImportCutOffByTheDatabaseSaysHowFarItGot() async throws {
        try await APIFixture.with("import_cut_off") { fixture, client in
            try await fixture.store.client.cutOffConnections(
                named: "cut_off_import",
                "BEFORE INSERT ON push_to_start_tokens",
                when: "NEW.device_id = 'device-5500'"
            )
            let rows = (0..<6_000).map {
                #"{"deviceId": "device-\#($0)", "attributesType": "GameAttributes", "token": "\#(String(format: "%08x", $0))"}"#
            }
            let response = try await client.send(
                .post,
                self.tokensPath,
                key: fixture.key(.backend),
                body: rows.joined(separator: "\n"),
                contentType: "application/x-ndjson"
            )
            #expect(response.status == .serviceUnavailable, "\(response.text)")
            #expect(response.errorCode == "database_unavailable")
            let message = response.json["error"]?["message"]?.stringValue ?? ""
            #expect(message.contains("after the first \(RegistrationImport.chunkSize) of 6000 rows"), "\(message)")
            #expect(try await fixture.count("push_to_start_tokens") == RegistrationImport.chunkSize)
        }
    }

    @Test func importsNeedAKeyOfTheirApp() async throws {
        try await APIFixture.with("import_auth") { fixture, client in
            let body = #"[{"deviceId": "one", "attributesType": "GameAttributes", "token": "01"}]"#
            for path in [self.tokensPath, self.activitiesPath] {
                #expect(try await client.send(.post, path, key: nil, body: body).status == .unauthorized)
                #expect(try await client.send(.post, path, key: fixture.otherKey, body: body).status == .notFound)
            }
            #expect(try await fixture.count("push_to_start_tokens") == 0)
            for role in [APIKeys.Role.backend, .operator, .admin] {
                let response = try await client.send(.post, self.tokensPath, key: fixture.key(role), body: body)
                #expect(response.status == .ok, "\(role)")
            }
            #expect(try await fixture.count("push_to_start_tokens") == 1)
        }
    }

    @Test func activityRowsRegisterRotateAndAreRefusedAsTheirPUTWould() async throws {
        try await APIFixture.with("import_activities") { fixture, client in
            let key = fixture.key(.backend)
            let put = try await client.send(
                .put,
                "/v1/apps/com.example.game/activities/ended",
                key: key,
                body: #"{"attributesType": "GameAttributes"}"#
            )
            #expect(put.status == .created)
            #expect(try await client.send(.delete, "/v1/apps/com.example.game/activities/ended", key: key).status == .noContent)
            let body = """
                {"activityId": "act-1", "attributesType": "GameAttributes", "pushToken": "a1", "deviceId": "d1"}
                {"activityId": "act-2", "attributesType": "GameAttributes"}
                {"activityId": "act-1", "attributesType": "GameAttributes", "pushToken": "a2"}
                {"activityId": "act-2", "attributesType": "GameAttributes", "pushToken": "b1"}
                {"activityId": "act-3", "attributesType": "GameAttributes", "feed": "nope"}
                {"activityId": "act-4", "attributesType": "GameAttributes", "pushToken": "c1", "channelId": "x"}
                {"activityId": "ended", "attributesType": "GameAttributes", "pushToken": "d1"}
                {"activityId": "act-5", "attributesType": "GameAttributes", "pushToken": "a2"}
                {"activityId": "act-1", "attributesType": "Other"}
                """
            let response = try await client.send(.post, self.activitiesPath, key: key, body: body, contentType: "application/x-ndjson; charset=utf-8")
            #expect(response.status == .ok, "\(response.text)")
            #expect(
                Self.results(response) == [
                    "0 created", "1 created", "2 tokenRotated", "3 tokenAdded", "4 404 not_found feed", "5 422 invalid channelId",
                    "6 409 conflict activityId", "7 409 conflict pushToken", "8 409 conflict attributesType",
                ]
            )
            #expect(
                response.json["counts"]
                    == .object(["created": .int(2), "tokenAdded": .int(1), "tokenRotated": .int(1), "unchanged": .int(0), "failed": .int(5)])
            )
            #expect(try await fixture.count("activities") == 3)
            let tokens = try await fixture.client.query(
                "SELECT a.activity_key, t.token, t.invalidated_at IS NULL FROM activity_tokens t JOIN activities a ON a.id = t.activity_id ORDER BY t.id"
            )
            var found: [String] = []
            for try await (activity, token, live) in tokens.decode((String, String, Bool).self) { found.append("\(activity) \(token) \(live)") }
            #expect(found == ["act-1 a1 false", "act-1 a2 true", "act-2 b1 true"])
        }
    }

    /// Each row as `INDEX RESULT` or `INDEX STATUS CODE FIELD`.
    private static func results(_ response: TestResponse) -> [String] {
        guard case .array(let rows)? = response.json["results"] else { return [] }
        return rows.map { row in
            let index = row["index"]?.intValue ?? -1
            if let result = row["result"]?.stringValue { return "\(index) \(result)" }
            let error = row["error"]
            return "\(index) \(error?["status"]?.intValue ?? 0) \(error?["code"]?.stringValue ?? "") \(error?["field"]?.stringValue ?? "-")"
        }
    }
}

extension TestClientProtocol {
    /// Sends a body of the given `Content-Type`.
    fileprivate func send(_ method: HTTPRequest.Method, _ uri: String, key: String?, body: String, contentType: String) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: contentType]
        if let key { headers[.authorization] = "Bearer \(key)" }
        return try await self.execute(uri: uri, method: method, headers: headers, body: ByteBuffer(string: body))
    }
}
