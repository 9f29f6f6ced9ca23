import Foundation
import LivecastCore
import LivecastTesting
import PostgresNIO
import Testing

@testable import LivecastStore

/// The fan-out's page of followers reads one token a follower, whatever PostgreSQL's statistics say: a feed whose
/// followers registered since the last analyze (one that just filled up before kick-off) once read every token above
/// the cursor for each follower, 1.5 s a page of 2,000 at 3,000 followers and growing with their square.
@Suite struct FollowerPageTests {
    private static let followers = 3000
    private static let pageSize = 2000

    @Test func aPageReadsOneTokenAFollowerBeforeAndAfterAnAnalyze() async throws {
        try await StoreFixture.with("follower_page") { fixture in
            let (feed, _) = try await Feeds(client: fixture.client, logger: fixture.logger).put(
                .init(appID: fixture.appID, feedKey: "final", attributesType: "GameAttributes", attributes: try RawJSON(validating: "{}"))
            )
            let rows = try await fixture.client.query(
                """
                WITH followers AS (
                    INSERT INTO activities (app_id, activity_key, attributes_type, feed_id)
                    SELECT \(fixture.appID), 'fan-' || g, 'GameAttributes', \(feed.id) FROM generate_series(1, \(Self.followers)) g RETURNING id
                )
                INSERT INTO activity_tokens (app_id, activity_id, token, generation)
                SELECT \(fixture.appID), id, lpad(to_hex(id), 64, '0'), 1 FROM followers RETURNING activity_id, token
                """
            )
            var tokens: [Int64: String] = [:]
            for try await (id, token) in rows.decode((Int64, String).self) { tokens[id] = token }
            let first = tokens.keys.min() ?? 0

            // Filled a moment ago, so never analyzed: the case that read every token for each follower.
            #expect(try await self.blocksRead(feedID: feed.id, fixture) <= 5 * Self.pageSize)
            try await fixture.client.query("ANALYZE activities, activity_tokens")
            #expect(try await self.blocksRead(feedID: feed.id, fixture) <= 5 * Self.pageSize)

            let page = try await fixture.client.withConnection { connection in
                try await fixture.outbox().followers(ofFeed: feed.id, after: 0, through: .max, limit: Self.pageSize, on: connection)
            }
            #expect(page.map(\.activityID) == Array(first..<(first + Int64(Self.pageSize))))
            #expect(page.allSatisfy { $0.token == tokens[$0.activityID] })
        }
    }

    /// The buffers the first page's query touches, as `EXPLAIN (ANALYZE, BUFFERS)` counts them.
    private func blocksRead(feedID: Int64, _ fixture: StoreFixture) async throws -> Int {
        let sql = FollowerPage.sql.replacingOccurrences(of: "$1", with: "\(feedID)").replacingOccurrences(of: "$2", with: "0")
            .replacingOccurrences(of: "$3", with: "\(Int64.max)").replacingOccurrences(of: "$4", with: "\(Self.pageSize)")
        let rows = try await fixture.client.query(PostgresQuery(unsafeSQL: "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql))
        var plan = ""
        for try await text in rows.decode(String.self) { plan += text }
        let root = try JSONDecoder().decode([Explained].self, from: Data(plan.utf8))[0].plan
        #expect(root.actualRows == Self.pageSize)
        return root.sharedHitBlocks + root.sharedReadBlocks
    }

    /// The top node of an `EXPLAIN (FORMAT JSON)`.
    private struct Explained: Decodable {
        struct Node: Decodable {
            var actualRows: Int
            var sharedHitBlocks: Int
            var sharedReadBlocks: Int

            enum CodingKeys: String, CodingKey {
                case actualRows = "Actual Rows"
                case sharedHitBlocks = "Shared Hit Blocks"
                case sharedReadBlocks = "Shared Read Blocks"
            }
        }

        var plan: Node

        enum CodingKeys: String, CodingKey {
            case plan = "Plan"
        }
    }
}
