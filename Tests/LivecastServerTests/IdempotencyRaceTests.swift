import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastStore
import Testing

@testable import LivecastServer

/// A client that retries before its first try was answered (a timeout during a failover) sends the same request with
/// the same `Idempotency-Key` while the first is still being stored. Every copy gets the first one's answer: the one
/// that loses the race replays what the winner kept, instead of `409 conflict`.
@Suite struct IdempotencyRaceTests {
    private let feed = "/v1/apps/com.example.game/feeds/game-race"
    private static let copies = 8
    private static let rounds = 5

    /// Copies of one feed update race into the outbox: one update is stored per key, and every copy is answered
    /// `202` with its answer.
    @Test func copiesOfAnUpdateRacingIntoTheOutboxAreAllAnsweredAsTheFirst() async throws {
        try await APIFixture.with("idempotency_race_outbox") { fixture, client in
            try await self.makeFeed(fixture, client)
            let now = Int(Date().timeIntervalSince1970)
            for round in 1...Self.rounds {
                let body = #"{"contentState": {"home": \#(round)}, "timestamp": \#(now + round)}"#
                try await Self.race(client, "\(self.feed)/updates", key: fixture.key(.backend), body: body, idempotencyKey: "goal-\(round)")
                #expect(try await fixture.count("updates") == round)
            }
        }
    }

    /// Copies of a scheduled update race to be kept: one is kept per key, and every copy is answered `202` with its
    /// answer.
    @Test func copiesOfAScheduledUpdateRacingAreAllAnsweredAsTheFirst() async throws {
        try await APIFixture.with("idempotency_race_scheduled") { fixture, client in
            try await self.makeFeed(fixture, client)
            let now = Int(Date().timeIntervalSince1970)
            for round in 1...Self.rounds {
                let body = #"{"contentState": {"home": \#(round)}, "timestamp": \#(now + round), "sendAt": \#(now + 3600)}"#
                try await Self.race(client, "\(self.feed)/updates", key: fixture.key(.backend), body: body, idempotencyKey: "later-\(round)")
                #expect(try await fixture.count("scheduled_updates") == round)
            }
        }
    }

    private func makeFeed(_ fixture: APIFixture, _ client: some TestClientProtocol) async throws {
        let created = try await client.send(
            .put,
            self.feed,
            key: fixture.key(.operator),
            body: #"{"attributesType": "GameAttributes", "attributes": {}}"#
        )
        #expect(created.status == .created, "\(created.text)")
    }

    /// Sends ``copies`` copies of one request at once and checks each is answered `202` with the same answer.
    private static func race(
        _ client: some TestClientProtocol,
        _ path: String,
        key: String,
        body: String,
        idempotencyKey: String
    ) async throws {
        let answers = try await withThrowingTaskGroup(of: TestResponse.self) { group in
            for _ in 0..<Self.copies {
                group.addTask { try await client.send(.post, path, key: key, body: body, headers: [.idempotencyKey: idempotencyKey]) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for answer in answers {
            #expect(answer.status == .accepted, "\(answer.text)")
        }
        #expect(Set(answers.map(\.text)).count == 1, "\(answers.map(\.text))")
        #expect(answers.filter { $0.headers[.idempotentReplayed] == nil }.count == 1)
    }
}
