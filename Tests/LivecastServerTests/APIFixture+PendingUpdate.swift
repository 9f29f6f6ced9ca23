import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastStore
import LivecastTesting
import Testing

extension APIFixture {
    /// An update of a new feed, left pending: no dispatcher sends it.
    func pendingUpdate(_ client: any TestClientProtocol) async throws -> Int {
        let feed = try await client.send(
            .put,
            "/v1/apps/com.example.game/feeds/game-1",
            key: self.key(.operator),
            body: #"{"attributesType": "GameAttributes", "attributes": {}}"#
        )
        #expect(feed.status == .created)
        let update = try await client.send(
            .post,
            "/v1/apps/com.example.game/feeds/game-1/updates",
            key: self.key(.backend),
            body: #"{"contentState": {"home": 1}}"#
        )
        return try #require(update.json["updateId"]?.intValue)
    }
}
