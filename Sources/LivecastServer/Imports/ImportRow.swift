import LivecastStore
import Logging
import PostgresNIO

/// A row of a bulk import: a single registration's identifiers and body, which becomes that registration.
protocol ImportRow: CheckedBody {
    /// What the registration did: `created`, `rotated`, ….
    associatedtype Result: RawRepresentable<String> & CaseIterable & Sendable & Hashable

    /// Registers the rows' registrations (of `appID`), as the single registration would one after another.
    static func register(_ rows: [Self], appID: Int64, database: PostgresClient, logger: Logger) async throws -> [ImportOutcome<Result>]
}

extension PushToStartTokenImportRow: ImportRow {
    static func register(
        _ rows: [Self],
        appID: Int64,
        database: PostgresClient,
        logger: Logger
    ) async throws -> [ImportOutcome<PushToStartTokens.Result>] {
        try await PushToStartTokens(client: database, logger: logger).importRegistrations(
            rows.map {
                $0.body.registration(appID: appID, deviceID: $0.deviceId, attributesType: $0.attributesType, userID: $0.body.userId)
            }
        )
    }
}

extension ActivityImportRow: ImportRow {
    static func register(_ rows: [Self], appID: Int64, database: PostgresClient, logger: Logger) async throws -> [ImportOutcome<Activities.Result>] {
        try await Activities(client: database, logger: logger).importRegistrations(
            rows.map { $0.body.registration(appID: appID, activityKey: $0.activityId, userID: $0.body.userId) }
        )
    }
}
