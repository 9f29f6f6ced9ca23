import Foundation
import Logging
import NIOCore
import PostgresNIO

/// An app's credentials for Apple's APNs data export (a CloudKit data-export token, its team and the app id Apple
/// knows the app by), and their opening: the token is sealed under the master key, bound to its app, and never shown
/// again (`apple_metrics_credentials`, `sql/0046_apple_metrics.sql`).
package struct AppleMetricsCredentials: DatabaseBacked {
    /// One app's credentials, opened. Never logged: its description hides the token.
    package struct Opened: Sendable, CustomStringConvertible {
        package var appID: Int64
        package var teamID: String
        /// The bundle id Apple's export names the app by.
        package var appleAppID: String
        /// The CloudKit data-export token.
        package var token: String

        package var description: String { "AppleMetricsCredentials(team: \(self.teamID), app: \(self.appleAppID), token: <redacted>)" }
    }

    /// What the API shows of an app's credentials: never the token.
    package struct Shown: Sendable, Hashable, Encodable {
        package var teamId: String
        package var appId: String
        /// When they were last set, ISO 8601.
        package var updatedAt: String
    }

    package let database: Database

    package init(database: Database) { self.database = database }

    /// Sets an app's credentials, replacing any it had.
    /// - Throws: ``StoreError`` `invalid` for a malformed team id, app id or token.
    package func set(appID: Int64, teamID: String, appleAppID: String, token: String, masterKey: MasterKey) async throws -> Shown {
        guard teamID.wholeMatch(of: /^[A-Z0-9]{10}$/) != nil else {
            throw StoreError(.invalid, "the team id is 10 capitals or digits", field: "teamId")
        }
        guard !appleAppID.isEmpty, appleAppID.utf8.count <= 255, appleAppID.wholeMatch(of: /^[A-Za-z0-9.\-]+$/) != nil else {
            throw StoreError(.invalid, "the app id is the app's bundle id as Apple knows it", field: "appId")
        }
        guard (1...4096).contains(token.utf8.count), token.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
            throw StoreError(.invalid, "the token is the data-export token the CloudKit Console made, without spaces", field: "token")
        }
        let sealed = ByteBuffer(bytes: masterKey.seal(Data(token.utf8), context: Self.context(appID)))
        let rows = try await self.client.guardedQuery(
            """
            INSERT INTO apple_metrics_credentials (app_id, team_id, apple_app_id, token_sealed) VALUES (\(appID), \(teamID), \(appleAppID), \(sealed))
            ON CONFLICT (app_id) DO UPDATE SET team_id = excluded.team_id, apple_app_id = excluded.apple_app_id,
                token_sealed = excluded.token_sealed, updated_at = now()
            RETURNING to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
            """,
            logger: self.logger
        )
        var updatedAt = ""
        for try await text in rows.decode(String.self) { updatedAt = text }
        return Shown(teamId: teamID, appId: appleAppID, updatedAt: updatedAt)
    }

    /// Removes an app's credentials; what was exported stays. - Returns: Whether it had any.
    package func remove(appID: Int64) async throws -> Bool {
        !(try await self.client.guardedQuery("DELETE FROM apple_metrics_credentials WHERE app_id = \(appID) RETURNING app_id", logger: self.logger))
            .isEmpty
    }

    /// What the API shows of an app's credentials, or `nil` when it has none.
    package func shown(appID: Int64) async throws -> Shown? {
        let rows = try await self.client.guardedQuery(
            """
            SELECT team_id, apple_app_id, to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
            FROM apple_metrics_credentials WHERE app_id = \(appID)
            """,
            logger: self.logger
        )
        for try await (teamID, appleAppID, updatedAt) in rows.decode((String, String, String).self) {
            return Shown(teamId: teamID, appId: appleAppID, updatedAt: updatedAt)
        }
        return nil
    }

    /// The ids of the apps that have credentials, in id order.
    package func apps() async throws -> [Int64] {
        let rows = try await self.client.guardedQuery("SELECT app_id FROM apple_metrics_credentials ORDER BY app_id", logger: self.logger)
        var ids: [Int64] = []
        for try await id in rows.decode(Int64.self) { ids.append(id) }
        return ids
    }

    /// An app's credentials, opened with the master key, or `nil` when it has none.
    /// - Throws: ``StoreError`` `invalid` when the master key does not open them.
    package func opened(appID: Int64, masterKey: MasterKey) async throws -> Opened? {
        let rows = try await self.client.guardedQuery(
            "SELECT team_id, apple_app_id, token_sealed FROM apple_metrics_credentials WHERE app_id = \(appID)",
            logger: self.logger
        )
        for try await (teamID, appleAppID, sealed) in rows.decode((String, String, ByteBuffer).self) {
            let token = try masterKey.open(Data(sealed.readableBytesView), context: Self.context(appID))
            return Opened(appID: appID, teamID: teamID, appleAppID: appleAppID, token: String(decoding: token, as: UTF8.self))
        }
        return nil
    }

    /// Sealed tokens are bound to their app: one copied to another app's row does not open.
    private static func context(_ appID: Int64) -> String { "livecast.apple-metrics-token:\(appID)" }
}
