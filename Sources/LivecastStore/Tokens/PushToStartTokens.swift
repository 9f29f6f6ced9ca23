import Foundation
import LivecastCore
import Logging
import PostgresNIO

/// Push-to-start tokens: one live token per device and `ActivityAttributes` type, rotated without a gap.
public struct PushToStartTokens: Sendable {
    /// A device's registration, as its app reports it.
    public struct Registration: Sendable, Hashable {
        public var appID: Int64
        public var deviceID: String
        public var attributesType: String
        /// The token in hex (any case; stored lowercase).
        public var token: String
        public var userID: String?
        public var osVersion: String?
        public var frequentUpdatesEnabled: Bool

        public init(
            appID: Int64,
            deviceID: String,
            attributesType: String,
            token: String,
            userID: String? = nil,
            osVersion: String? = nil,
            frequentUpdatesEnabled: Bool = true
        ) {
            self.appID = appID
            self.deviceID = deviceID
            self.attributesType = attributesType
            self.token = token
            self.userID = userID
            self.osVersion = osVersion
            self.frequentUpdatesEnabled = frequentUpdatesEnabled
        }
    }

    /// What a registration did.
    public enum Result: String, Sendable, Hashable, CaseIterable {
        /// The device had no live token for the type.
        case created
        /// The device's live token was replaced; the old one is invalidated (`rotated`).
        case rotated
        /// The token was already the live one; its details and last-seen time were refreshed.
        case unchanged
    }

    /// Why a token stops being used.
    public enum InvalidationReason: String, Sendable, Hashable {
        case rotated
        case deleted
        case unregistered = "Unregistered"
        case expiredToken = "ExpiredToken"
        case badDeviceToken = "BadDeviceToken"
        case deviceTokenNotForTopic = "DeviceTokenNotForTopic"
        case expired
    }

    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Registers a device's token: creates it, rotates to it, or refreshes it, in one transaction.
    /// - Throws: ``StoreError`` `invalid` for a token that is not hex, `conflict` when another device of the app
    ///   holds the token.
    public func register(_ registration: Registration) async throws -> Result {
        guard let token = DeviceToken.normalized(registration.token) else {
            throw StoreError(.invalid, "the token must be hex: an even number of 2 to \(DeviceToken.maximumHexDigits) digits", field: "token")
        }
        do {
            return try await self.client.withTransaction(logger: self.logger) { connection in
                try await self.register(registration, token: token, on: connection)
            }
        } catch let error as PostgresTransactionError {
            if let storeError = error.closureError as? StoreError { throw storeError }
            if StoreError.isUniqueViolation(error) {
                // A concurrent registration for the same device won the race; this one lost cleanly.
                throw StoreError(.conflict, "another registration for this device and type happened at the same time; retry")
            }
            throw error
        }
    }

    private func register(_ registration: Registration, token: String, on connection: PostgresConnection) async throws -> Result {
        let appID = registration.appID
        // Serialise registrations of one device and type: lock its live row, if any.
        let liveRows = try await connection.query(
            """
            SELECT id, token FROM push_to_start_tokens
            WHERE app_id = \(appID) AND device_id = \(registration.deviceID) AND attributes_type = \(registration.attributesType)
              AND invalidated_at IS NULL
            FOR UPDATE
            """,
            logger: self.logger
        )
        var live: (id: Int64, token: String)?
        for try await row in liveRows.decode((Int64, String).self) { live = row }
        let holderRows = try await connection.query(
            "SELECT id, device_id, attributes_type, invalidated_at IS NULL FROM push_to_start_tokens WHERE app_id = \(appID) AND token = \(token) FOR UPDATE",
            logger: self.logger
        )
        var holder: (id: Int64, deviceID: String, attributesType: String, isLive: Bool)?
        for try await row in holderRows.decode((Int64, String, String, Bool).self) { holder = row }
        if let holder, holder.deviceID != registration.deviceID || holder.attributesType != registration.attributesType {
            guard !holder.isLive else {
                throw StoreError(.conflict, "another device or attributes type holds this token", field: "token")
            }
        }
        if let live, live.token == token {
            try await connection.query(
                """
                UPDATE push_to_start_tokens SET user_id = \(registration.userID), os_version = \(registration.osVersion),
                    frequent_updates_enabled = \(registration.frequentUpdatesEnabled), last_seen_at = now()
                WHERE id = \(live.id)
                """,
                logger: self.logger
            )
            return .unchanged
        }
        if let live {
            try await connection.query(
                "UPDATE push_to_start_tokens SET invalidated_at = now(), invalidation_reason = 'rotated' WHERE id = \(live.id)",
                logger: self.logger
            )
        }
        if let holder {
            // The token comes back (re-registered after being invalidated): revive its row for this device.
            try await connection.query(
                """
                UPDATE push_to_start_tokens SET device_id = \(registration.deviceID), attributes_type = \(registration.attributesType),
                    user_id = \(registration.userID), os_version = \(registration.osVersion),
                    frequent_updates_enabled = \(registration.frequentUpdatesEnabled), registered_at = now(), last_seen_at = now(),
                    invalidated_at = NULL, invalidation_reason = NULL, apns_invalid_since_ms = NULL
                WHERE id = \(holder.id)
                """,
                logger: self.logger
            )
        } else {
            try await connection.query(
                """
                INSERT INTO push_to_start_tokens (app_id, device_id, attributes_type, token, user_id, os_version, frequent_updates_enabled)
                VALUES (\(appID), \(registration.deviceID), \(registration.attributesType), \(token), \(registration.userID),
                        \(registration.osVersion), \(registration.frequentUpdatesEnabled))
                """,
                logger: self.logger
            )
        }
        return live == nil ? .created : .rotated
    }

    /// Stops using a device's token for a type, as when the app unregisters it.
    /// - Returns: Whether there was a live token.
    public func delete(appID: Int64, deviceID: String, attributesType: String) async throws -> Bool {
        let rows = try await self.client.query(
            """
            UPDATE push_to_start_tokens SET invalidated_at = now(), invalidation_reason = 'deleted'
            WHERE app_id = \(appID) AND device_id = \(deviceID) AND attributes_type = \(attributesType) AND invalidated_at IS NULL
            RETURNING id
            """,
            logger: self.logger
        )
        var found = false
        for try await _ in rows.decode(Int64.self) { found = true }
        return found
    }

    /// Applies an APNs verdict on a token (APNS-REFERENCE §4.1, docs/ARCHITECTURE.md invariant 6): `BadDeviceToken` and
    /// `DeviceTokenNotForTopic` invalidate at once; `Unregistered`/`ExpiredToken` only when APNs learnt it after
    /// the token's last registration, so a token the device re-registered meanwhile stays.
    /// - Parameters:
    ///   - invalidSinceMillis: The 410 answer's `timestamp`, in milliseconds since 1970.
    /// - Returns: Whether the token was invalidated.
    public func invalidate(appID: Int64, token: String, reason: InvalidationReason, invalidSinceMillis: Int64? = nil) async throws -> Bool {
        let rows = try await self.client.query(
            """
            UPDATE push_to_start_tokens SET invalidated_at = now(), invalidation_reason = \(reason.rawValue),
                apns_invalid_since_ms = \(invalidSinceMillis)
            WHERE app_id = \(appID) AND token = \(token.lowercased()) AND invalidated_at IS NULL
              AND (\(invalidSinceMillis)::bigint IS NULL OR \(invalidSinceMillis)::bigint > (extract(epoch FROM registered_at) * 1000)::bigint)
            RETURNING id
            """,
            logger: self.logger
        )
        var invalidated = false
        for try await _ in rows.decode(Int64.self) { invalidated = true }
        return invalidated
    }
}
