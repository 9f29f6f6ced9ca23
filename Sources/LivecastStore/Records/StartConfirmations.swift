import LivecastCore
import Logging
package import PostgresNIO

/// How many of an app's feed starts the devices' apps confirmed by registering the started activity within the
/// registration timeout, over the last day. APNs answers 200 to a start a device then drops (over its budget, say):
/// this share is the one honest signal of such losses, per app here and per feed in ``Feeds/Feed``.
package struct StartConfirmations: Sendable, Hashable, Encodable {
    /// Starts sent in the last day.
    package var sent: Int
    /// Of those, the ones whose registration timeout has passed.
    package var due: Int
    /// Of these, the ones confirmed in time.
    package var confirmed: Int

    /// `confirmed` ÷ `due`; `nil` before any start's timeout has passed.
    package var ratio: Double? { Self.ratio(confirmed: self.confirmed, due: self.due) }

    private enum CodingKeys: String, CodingKey {
        case sent, due, confirmed
        case ratio = "confirmationRatio"
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.sent, forKey: .sent)
        try container.encode(self.due, forKey: .due)
        try container.encode(self.confirmed, forKey: .confirmed)
        try container.encodeIfPresent(self.ratio, forKey: .ratio)
    }

    /// `confirmed` ÷ `due`, `nil` when nothing is due.
    static func ratio(confirmed: Int, due: Int) -> Double? {
        due == 0 ? nil : Double(confirmed) / Double(due)
    }

    /// SQL that is true for a start of `feed_starts` alias `alias` whose registration timeout has passed.
    static func dueSQL(_ alias: String, timeout: Duration) -> String {
        "\(alias).started_at < now() - make_interval(secs => \(timeout.inSeconds))"
    }

    /// SQL that is true for a start of alias `alias` confirmed within the timeout (and so due).
    static func confirmedSQL(_ alias: String, timeout: Duration) -> String {
        "(\(Self.dueSQL(alias, timeout: timeout)) AND \(alias).confirmed_at <= \(alias).started_at + make_interval(secs => \(timeout.inSeconds)))"
    }

    /// Each app's starts of the last day, by bundle id and environment (`com.example.game (sandbox)`).
    package static func byApp(registrationTimeout: Duration, client: PostgresClient, logger: Logger) async throws -> [String: StartConfirmations] {
        Dictionary(
            try await Self.read(appID: nil, registrationTimeout: registrationTimeout, client: client, logger: logger),
            uniquingKeysWith: { first, _ in first }
        )
    }

    /// One app's starts of the last day.
    package static func read(appID: Int64, registrationTimeout: Duration, client: PostgresClient, logger: Logger) async throws -> StartConfirmations {
        try await Self.read(appID: appID, registrationTimeout: registrationTimeout, client: client, logger: logger).first?.1
            ?? StartConfirmations(sent: 0, due: 0, confirmed: 0)
    }

    private static func read(
        appID: Int64?,
        registrationTimeout: Duration,
        client: PostgresClient,
        logger: Logger
    ) async throws -> [(String, StartConfirmations)] {
        let rows = try await client.guardedQuery(
            """
            SELECT a.bundle_id || ' (' || a.environment || ')', count(*)::int,
                count(*) FILTER (WHERE \(unescaped: Self.dueSQL("s", timeout: registrationTimeout)))::int,
                count(*) FILTER (WHERE \(unescaped: Self.confirmedSQL("s", timeout: registrationTimeout)))::int
            FROM feed_starts s JOIN feeds f ON f.id = s.feed_id JOIN apps a ON a.id = f.app_id
            WHERE s.started_at > now() - interval '1 day' AND (\(appID)::bigint IS NULL OR f.app_id = \(appID))
            GROUP BY a.bundle_id, a.environment
            """,
            logger: logger
        )
        var byApp: [(String, StartConfirmations)] = []
        for try await (app, sent, due, confirmed) in rows.decode((String, Int, Int, Int).self) {
            byApp.append((app, StartConfirmations(sent: sent, due: due, confirmed: confirmed)))
        }
        return byApp
    }
}
