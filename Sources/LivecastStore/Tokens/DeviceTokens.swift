import Logging
package import PostgresNIO

/// A device's push-to-start tokens, live and invalidated, for support's questions about one device. It is encoded as
/// the API shows it (`GET /v1/apps/{bundleId}/push-to-start-tokens/{deviceId}`).
package struct DeviceTokens: Sendable, Hashable, Encodable {
    /// One token of the device.
    package struct Token: Sendable, Hashable, Encodable {
        package var attributesType: String
        package var token: String
        /// Whether Livecast still starts activities with it.
        package var isLive: Bool
        package var osVersion: String?
        package var userID: String?
        /// When it was first registered and last registered again (UNIX seconds).
        package var registeredAt: Int64
        package var lastSeenAt: Int64
        package var invalidatedAt: Int64?
        /// Why it was invalidated: APNs' reason (`Unregistered`, `BadDeviceToken`…), `rotated`, `moved`, `deleted` or
        /// `expired`.
        package var invalidationReason: String?

        /// The API's names.
        private enum CodingKeys: String, CodingKey {
            case attributesType, token
            case isLive = "live"
            case osVersion
            case userID = "userId"
            case registeredAt, lastSeenAt, invalidatedAt, invalidationReason
        }
    }

    package var deviceID: String
    /// By attributes type, the live token first, then the invalidated ones newest first.
    package var tokens: [Token]

    /// The API's names.
    private enum CodingKeys: String, CodingKey {
        case deviceID = "deviceId"
        case tokens
    }

    /// The most tokens read for one device (a device rotates its tokens now and then).
    package static let maximumTokens = 1000

    /// Reads a device's tokens.
    /// - Returns: `nil` when the app knows no token of that device.
    package static func read(appID: Int64, deviceID: String, client: PostgresClient, logger: Logger) async throws -> DeviceTokens? {
        let rows = try await client.guardedQuery(
            """
            SELECT attributes_type, token, invalidated_at IS NULL, os_version, user_id, extract(epoch FROM registered_at)::bigint,
                extract(epoch FROM last_seen_at)::bigint, extract(epoch FROM invalidated_at)::bigint, invalidation_reason
            FROM push_to_start_tokens WHERE app_id = \(appID) AND device_id = \(deviceID)
            ORDER BY attributes_type, invalidated_at IS NOT NULL, id DESC LIMIT \(Self.maximumTokens)
            """,
            logger: logger
        )
        var tokens: [Token] = []
        for try await row in rows {
            let cells = row.makeRandomAccess()
            tokens.append(
                Token(
                    attributesType: try cells[0].decode(String.self),
                    token: try cells[1].decode(String.self),
                    isLive: try cells[2].decode(Bool.self),
                    osVersion: try cells[3].decode(String?.self),
                    userID: try cells[4].decode(String?.self),
                    registeredAt: try cells[5].decode(Int64.self),
                    lastSeenAt: try cells[6].decode(Int64.self),
                    invalidatedAt: try cells[7].decode(Int64?.self),
                    invalidationReason: try cells[8].decode(String?.self)
                )
            )
        }
        return tokens.isEmpty ? nil : DeviceTokens(deviceID: deviceID, tokens: tokens)
    }
}
