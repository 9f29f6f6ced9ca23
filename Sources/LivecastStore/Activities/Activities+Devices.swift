import Logging
import PostgresNIO

extension Activities {
    /// The one device a caller may register and end activities of (a client key's, named by each request), and how
    /// many running activities that device may have.
    package struct DeviceScope: Sendable, Hashable {
        package var deviceID: String
        /// Running activities the device may have; a new one past them is refused (`device_limit_reached`).
        package var activityLimit: Int

        package init(deviceID: String, activityLimit: Int) {
            self.deviceID = deviceID
            self.activityLimit = activityLimit
        }
    }

    /// Refuses a new activity of a device that already has its cap of running ones (index `activities_device`).
    /// The device's `client_devices` row (its admission) is locked first, until the transaction ends, so that its
    /// registrations in parallel, on any instance, count one after another and cannot pass the cap together.
    /// - Throws: ``StoreError`` `deviceLimitReached`.
    func checkRoom(on device: DeviceScope, appID: Int64, connection: PostgresConnection) async throws {
        try await connection.query(
            "SELECT 1 FROM client_devices WHERE app_id = \(appID) AND device_id = \(device.deviceID) FOR UPDATE",
            logger: self.logger
        )
        let rows = try await connection.query(
            """
            SELECT count(*)::int FROM activities
            WHERE app_id = \(appID) AND device_id = \(device.deviceID) AND state IN \(unescaped: ActivityState.runningSQL)
            """,
            logger: self.logger
        )
        var running = 0
        for try await count in rows.decode(Int.self) { running = count }
        guard running < device.activityLimit else {
            throw StoreError(
                .deviceLimitReached,
                "this device has \(running) running activities, the most one device may register; end some first",
                field: "activityId"
            )
        }
    }

    /// Records that the activity left the device, as the reaper records a dismissal: it is `dismissed` (ended too,
    /// if it was running), its update token is forgotten (invalidated, reason `dismissed`), and nothing more is sent
    /// to it. Dismissing a dismissed activity changes nothing. One still running, and not replaced by a renewal, was
    /// swiped away by the user (`dismissed_by` `user`): its device is left out of the feed's renewals and later
    /// starts (``Outbox/audience(of:limit:on:)``).
    /// - Parameter deviceID: Dismisses the activity only if it is this device's (a client key's device).
    /// - Returns: Whether the activity exists (of `deviceID`, when given).
    package func dismissedByDevice(appID: Int64, activityKey: String, deviceID: String? = nil) async throws -> Bool {
        let rows = try await self.client.guardedQuery(
            """
            WITH target AS (
                SELECT id, state, renewed_to FROM activities
                WHERE app_id = \(appID) AND activity_key = \(activityKey) AND (\(deviceID)::text IS NULL OR device_id = \(deviceID))
                FOR UPDATE
            ),
            dismissed AS (
                UPDATE activities a SET state = \(unescaped: ActivityState.dismissed.sql), dismissed_at = now(), ended_at = coalesce(a.ended_at, now()),
                    dismissed_by = CASE WHEN a.state IN \(unescaped: ActivityState.runningSQL) AND target.renewed_to IS NULL
                                        THEN \(unescaped: DismissedBy.user.sql) ELSE \(unescaped: DismissedBy.device.sql) END,
                    ended_by = CASE WHEN a.state IN \(unescaped: ActivityState.runningSQL) THEN \(EndedBy.device.rawValue) ELSE a.ended_by END
                FROM target WHERE a.id = target.id AND target.state <> \(unescaped: ActivityState.dismissed.sql)
                RETURNING a.id
            ),
            forgotten AS (
                UPDATE activity_tokens t SET invalidated_at = now(), invalidation_reason = 'dismissed'
                FROM dismissed d WHERE t.activity_id = d.id AND t.invalidated_at IS NULL
            )
            SELECT id FROM target
            """,
            logger: self.logger
        )
        return !rows.isEmpty
    }
}
