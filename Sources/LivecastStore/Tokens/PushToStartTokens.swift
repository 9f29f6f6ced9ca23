import LivecastCore
import Logging
import PostgresNIO

/// Push-to-start tokens: one live token per device and `ActivityAttributes` type, rotated without a gap.
package struct PushToStartTokens: DatabaseBacked {
    /// A device's registration, as its app reports it.
    package struct Registration: Sendable, Hashable {
        package var appID: Int64
        package var deviceID: String
        package var attributesType: String
        /// The token in hex (any case; stored lowercase).
        package var token: String
        package var userID: String?
        package var osVersion: String?
        package var frequentUpdatesEnabled: Bool
        /// Whether a client key made it: the token is then unproven until APNs accepts a push to it (migration
        /// `0033`). Defaults to `false`: a backend vouches for what it registers.
        package var isByClientKey: Bool

        package init(
            appID: Int64,
            deviceID: String,
            attributesType: String,
            token: String,
            userID: String? = nil,
            osVersion: String? = nil,
            frequentUpdatesEnabled: Bool = true,
            isByClientKey: Bool = false
        ) {
            self.appID = appID
            self.deviceID = deviceID
            self.attributesType = attributesType
            self.token = token
            self.userID = userID
            self.osVersion = osVersion
            self.frequentUpdatesEnabled = frequentUpdatesEnabled
            self.isByClientKey = isByClientKey
        }

        /// The registration with its token normalised (lowercase hex).
        /// - Throws: ``StoreError`` `invalid` for a token that is not hex.
        package func checked() throws -> Registration {
            guard let token = DeviceToken.normalized(self.token) else {
                throw StoreError(.invalid, "the token must be hex: an even number of 2 to \(DeviceToken.maximumHexDigits) digits", field: "token")
            }
            var registration = self
            registration.token = token
            return registration
        }
    }

    /// What a registration did.
    package enum Result: String, Sendable, Hashable, CaseIterable {
        /// The device had no live token for the type.
        case created
        /// The device's live token was replaced; the old one is invalidated (`rotated`).
        case rotated
        /// The token was already the live one; its details and last-seen time were refreshed.
        case unchanged
    }

    /// Why a token stops being used.
    package enum InvalidationReason: String, Sendable, Hashable {
        case rotated
        case deleted
        case unregistered = "Unregistered"
        case expiredToken = "ExpiredToken"
        case badDeviceToken = "BadDeviceToken"
        case deviceTokenNotForTopic = "DeviceTokenNotForTopic"
        case expired
    }

    package let database: Database

    package init(database: Database) { self.database = database }

    /// Registers a device's token: creates it, rotates to it, or refreshes it, in one statement
    /// (`register_push_to_start_tokens`, migration `0022`). ``PushToStartRegistrar`` writes many at once.
    /// - Throws: ``StoreError`` `invalid` for a token that is not hex, `conflict` when another device of the app
    ///   holds the token.
    package func register(_ registration: Registration) async throws -> Result {
        let registration = try registration.checked()
        return try await Self.write([registration], client: self.client, logger: self.logger)[0].get()
    }

    /// Writes registrations (``Registration/checked()``) in one prepared statement and one transaction
    /// (``RegisterPushToStartTokensStatement``), and tells each one's
    /// result in order: the new devices' tokens by one insert, the others by the rules of migration `0008` each, as if
    /// the new ones had come first (migration `0022`). When the statement fails as a whole (two registrations of one
    /// new device raced another server's, or one of them broke a rule of the table), each is written again on its
    /// own, so only the one that lost fails.
    static func write(_ registrations: [Registration], client: PostgresClient, logger: Logger) async -> [Swift.Result<Result, any Error>] {
        do {
            let rows = try await client.guardedExecute(RegisterPushToStartTokensStatement(registrations), logger: logger)
            var results = [Swift.Result<Result, any Error>](
                repeating: .failure(StoreError(.conflict, "not written; retry")),
                count: registrations.count
            )
            for (ordinal, outcome) in rows {
                results[ordinal - 1] =
                    Result(rawValue: outcome).map { .success($0) }
                    ?? .failure(StoreError(.conflict, "another device or attributes type holds this token", field: "token"))
            }
            return results
        } catch {
            if StoreError.isUniqueViolation(error), registrations.count == 1 {
                // A concurrent registration of the same new device and type won the race; this one lost cleanly.
                return [.failure(StoreError(.conflict, "another registration for this device and type happened at the same time; retry"))]
            }
            // Only an error PostgreSQL answered may be one registration's; a lost connection is everyone's.
            guard registrations.count > 1, (error as? PSQLError)?.serverInfo != nil else {
                return registrations.map { _ in .failure(error) }
            }
            var results: [Swift.Result<Result, any Error>] = []
            for registration in registrations {
                results += await Self.write([registration], client: client, logger: logger)
            }
            return results
        }
    }

    /// Stops using a device's token for a type, as when the app unregisters it.
    /// - Returns: Whether there was a live token.
    package func delete(appID: Int64, deviceID: String, attributesType: String) async throws -> Bool {
        let rows = try await self.client.guardedQuery(
            """
            UPDATE push_to_start_tokens SET invalidated_at = now(), invalidation_reason = 'deleted'
            WHERE app_id = \(appID) AND device_id = \(deviceID) AND attributes_type = \(attributesType) AND invalidated_at IS NULL
            RETURNING id
            """,
            logger: self.logger
        )
        return !rows.isEmpty
    }

    /// How many live tokens a device holds for attributes types other than `attributesType`: those a registration
    /// for `attributesType` would keep beside its own (index `push_to_start_tokens_live`).
    package func liveTokenCount(appID: Int64, deviceID: String, besides attributesType: String) async throws -> Int {
        let rows = try await self.client.guardedQuery(
            """
            SELECT count(*)::int FROM push_to_start_tokens
            WHERE app_id = \(appID) AND device_id = \(deviceID) AND invalidated_at IS NULL AND attributes_type <> \(attributesType)
            """,
            logger: self.logger
        )
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    /// Applies an APNs verdict on a token (APNS-REFERENCE §4.1, docs/ARCHITECTURE.md invariant 6): `BadDeviceToken` and
    /// `DeviceTokenNotForTopic` invalidate at once; `Unregistered`/`ExpiredToken` only when APNs learnt it after
    /// the token's last registration, so a token the device re-registered meanwhile stays.
    /// - Parameters:
    ///   - invalidSinceMillis: The 410 answer's `timestamp`, in milliseconds since 1970.
    /// - Returns: Whether the token was invalidated.
    package func invalidate(appID: Int64, token: String, reason: InvalidationReason, invalidSinceMillis: Int64? = nil) async throws -> Bool {
        let rows = try await self.client.guardedQuery(
            """
            UPDATE push_to_start_tokens SET invalidated_at = now(), invalidation_reason = \(reason.rawValue),
                apns_invalid_since_ms = \(invalidSinceMillis)
            WHERE app_id = \(appID) AND token = \(token.lowercased()) AND invalidated_at IS NULL
              AND (\(invalidSinceMillis)::bigint IS NULL OR \(invalidSinceMillis)::bigint > (extract(epoch FROM registered_at) * 1000)::bigint)
            RETURNING id
            """,
            logger: self.logger
        )
        return !rows.isEmpty
    }
}
