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
        /// The most live tokens its device may hold (a client key's registration); a new attributes type past it is
        /// refused. `nil`: no cap.
        package var deviceTokenCap: Int?

        package init(
            appID: Int64,
            deviceID: String,
            attributesType: String,
            token: String,
            userID: String? = nil,
            osVersion: String? = nil,
            frequentUpdatesEnabled: Bool = true,
            isByClientKey: Bool = false,
            deviceTokenCap: Int? = nil
        ) {
            self.appID = appID
            self.deviceID = deviceID
            self.attributesType = attributesType
            self.token = token
            self.userID = userID
            self.osVersion = osVersion
            self.frequentUpdatesEnabled = frequentUpdatesEnabled
            self.isByClientKey = isByClientKey
            self.deviceTokenCap = deviceTokenCap
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
        /// The token was live on another device, and is this device's now (holding the token is the proof): the other
        /// device's rows for it are invalidated (`moved`) or re-pointed here.
        case moved
    }

    /// Why a token stops being used.
    package enum InvalidationReason: String, Sendable, Hashable {
        case rotated
        /// Another device registered the same token (a reinstall, a reset store).
        case moved
        case deleted
        case unregistered = "Unregistered"
        case expiredToken = "ExpiredToken"
        case badDeviceToken = "BadDeviceToken"
        case deviceTokenNotForTopic = "DeviceTokenNotForTopic"
        case expired
    }

    package let database: Database

    package init(database: Database) { self.database = database }

    /// Registers a device's token: creates it, rotates to it, refreshes it, or moves it from another device, in one
    /// statement (`register_push_to_start_tokens`, migrations `0022` and `0043`). ``PushToStartRegistrar`` writes many
    /// at once.
    /// - Throws: ``StoreError`` `invalid` for a token that is not hex, `deviceLimitReached` for a new attributes type
    ///   past the device's cap (``Registration/deviceTokenCap``).
    package func register(_ registration: Registration) async throws -> Result {
        let registration = try registration.checked()
        return try await Self.write([registration], client: self.client, logger: self.logger)[0].get()
    }

    /// Writes registrations (``Registration/checked()``) in one prepared statement and one transaction
    /// (``RegisterPushToStartTokensStatement``), and tells each one's
    /// result in order: the new devices' tokens by one insert, the others by the rules of migration `0043` each, as if
    /// the new ones had come first (migration `0022`). When the statement fails as a whole (two registrations of one
    /// new device raced another server's, or one of them broke a rule of the table), each is written again on its
    /// own, so only the one that lost fails; one that lost a race is written again (it then finds the winner's row).
    static func write(
        _ registrations: [Registration],
        client: PostgresClient,
        logger: Logger,
        tries: Int = 3
    ) async -> [Swift.Result<Result, any Error>] {
        do {
            let rows = try await client.guardedExecute(RegisterPushToStartTokensStatement(registrations), logger: logger)
            var results = [Swift.Result<Result, any Error>](
                repeating: .failure(StoreError(.conflict, "not written; retry")),
                count: registrations.count
            )
            for (ordinal, outcome) in rows {
                results[ordinal - 1] = Result(rawValue: outcome).map { .success($0) } ?? .failure(Self.deviceLimitReached(registrations[ordinal - 1]))
            }
            return results
        } catch {
            if StoreError.isUniqueViolation(error), registrations.count == 1, tries > 1 {
                // A concurrent registration of the same new device and type, or token, won the race: look again.
                return await Self.write(registrations, client: client, logger: logger, tries: tries - 1)
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

    /// The refusal of a registration past its device's cap.
    private static func deviceLimitReached(_ registration: Registration) -> StoreError {
        StoreError(
            .deviceLimitReached,
            "this device holds \(registration.deviceTokenCap ?? 0) live push-to-start tokens, the most one device may; delete some first",
            field: "attributesType"
        )
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
