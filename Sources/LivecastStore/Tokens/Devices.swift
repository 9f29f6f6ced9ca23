import Logging
import PostgresNIO

/// One device of an app as a whole: its push-to-start tokens and its activities.
package struct Devices: DatabaseBacked {
    /// What unregistering a device did.
    package struct Unregistration: Sendable, Hashable {
        /// Live push-to-start tokens invalidated (`deleted`).
        package var invalidatedTokens: Int
        /// Running activities ended, as if the device had ended each one.
        package var endedActivities: Int
    }

    package let database: Database

    package init(database: Database) { self.database = database }

    /// Unregisters a device, as when the app is signed out or uninstalled: its live push-to-start tokens are
    /// invalidated (reason `deleted`, as ``PushToStartTokens/delete(appID:deviceID:attributesType:)`` does) and its
    /// running activities end (as ``Activities/endedByDevice(appID:activityKey:deviceID:)`` does), in one
    /// transaction. Unregistering an unknown or unregistered device changes nothing.
    package func unregister(appID: Int64, deviceID: String) async throws -> Unregistration {
        try await self.client.withGuardedTransaction(logger: self.logger) { connection in
            let tokens = try await connection.query(
                """
                UPDATE push_to_start_tokens SET invalidated_at = now(), invalidation_reason = \(PushToStartTokens.InvalidationReason.deleted.rawValue)
                WHERE app_id = \(appID) AND device_id = \(deviceID) AND invalidated_at IS NULL
                RETURNING id
                """,
                logger: self.logger
            )
            var unregistration = Unregistration(invalidatedTokens: 0, endedActivities: 0)
            for try await _ in tokens.decode(Int64.self) { unregistration.invalidatedTokens += 1 }
            let activities = try await connection.query(
                """
                UPDATE activities SET state = \(unescaped: ActivityState.ended.sql), ended_at = now(), ended_by = \(EndedBy.device.rawValue)
                WHERE app_id = \(appID) AND device_id = \(deviceID) AND state IN \(unescaped: ActivityState.runningSQL)
                RETURNING id
                """,
                logger: self.logger
            )
            for try await _ in activities.decode(Int64.self) { unregistration.endedActivities += 1 }
            return unregistration
        }
    }
}
