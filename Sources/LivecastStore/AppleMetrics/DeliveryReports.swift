import Foundation
import Logging
import PostgresNIO

/// Reads ``DeliveryReport``s: Apple's exported figures, and Livecast's own from its records (every broadcast is kept
/// in `deliveries`; device pushes APNs accepted are the outbox's sent counts less its accepted broadcasts, dated by
/// the update's creation) and from what ``snapshot(appID:from:to:)`` kept of them before the reaper pruned them; and
/// writes the flagged days once each (`delivery_divergences`, whose insert writes the
/// `delivery.diverged` event).
package struct DeliveryReports: DatabaseBacked {
    package let database: Database

    package init(database: Database) { self.database = database }

    /// The report of an app over `from` through `to` (`yyyy-MM-dd`, UTC).
    package func report(appID: Int64, from: String, to: String, threshold: Double) async throws -> DeliveryReport {
        var sources = DeliveryReport.Sources()
        let apple = try await self.client.guardedQuery(
            """
            SELECT channel_id, to_char(day, 'YYYY-MM-DD'), published, delivered, subscriptions, unique_subscribers
            FROM apple_broadcast_days WHERE app_id = \(appID) AND day BETWEEN \(from)::date AND \(to)::date ORDER BY day
            """,
            logger: self.logger
        )
        for try await (channelID, day, published, delivered, subscriptions, unique) in apple.decode(
            (String, String, Int64, Int64, Int64, Int64?).self
        ) {
            sources.appleBroadcasts[channelID, default: []].append(
                AppleBroadcastDay(day: day, published: published, delivered: delivered, subscriptions: subscriptions, uniqueSubscribers: unique)
            )
        }
        let deliveries = try await self.client.guardedQuery(
            """
            SELECT to_char(day, 'YYYY-MM-DD'), push_type, status, count FROM apple_delivery_days
            WHERE app_id = \(appID) AND day BETWEEN \(from)::date AND \(to)::date ORDER BY day, push_type, status
            """,
            logger: self.logger
        )
        for try await (day, pushType, status, count) in deliveries.decode((String, String, String, Int64).self) {
            sources.appleDeliveries.append(AppleDeliveryDay(day: day, pushType: pushType, status: status, count: count))
        }
        let live = try await self.liveCounts(appID: appID, from: from, to: to)
        sources.broadcasts = live.broadcasts
        sources.pushes = live.pushes
        let kept = try await self.client.guardedQuery(
            """
            SELECT to_char(day, 'YYYY-MM-DD'), subject_kind, subject, sent, accepted FROM livecast_daily_counts
            WHERE app_id = \(appID) AND day BETWEEN \(from)::date AND \(to)::date
            """,
            logger: self.logger
        )
        for try await (day, kind, subject, sent, accepted) in kept.decode((String, DivergenceSubject, String, Int64, Int64).self) {
            switch kind {
            case .channel:
                let current = sources.broadcasts[subject]?[day] ?? DeliveryReport.LivecastBroadcasts(sent: 0, accepted: 0)
                sources.broadcasts[subject, default: [:]][day] = .init(sent: max(current.sent, sent), accepted: max(current.accepted, accepted))
            case .pushType:
                sources.pushes[subject, default: [:]][day] = max(sources.pushes[subject]?[day] ?? 0, accepted)
            }
        }
        let since = try await self.client.guardedQuery(
            "SELECT to_char(min(day), 'YYYY-MM-DD') FROM livecast_daily_counts WHERE app_id = \(appID)",
            logger: self.logger
        )
        for try await day in since.decode(String?.self) { sources.livecastSince = day }
        let liveDays = live.broadcasts.values.flatMap(\.keys) + live.pushes.values.flatMap(\.keys)
        if let first = liveDays.min(), sources.livecastSince.map({ first < $0 }) ?? true { sources.livecastSince = first }
        sources.exports = try await AppleMetricsExports(database: self.database).states(appID: appID)
        return DeliveryReport.assemble(from: from, to: to, threshold: threshold, sources)
    }

    /// Keeps Livecast's own figures of `from` through `to` (`livecast_daily_counts`) before the reaper prunes the
    /// records they come from: a day's figure only ever grows.
    package func snapshot(appID: Int64, from: String, to: String) async throws {
        let live = try await self.liveCounts(appID: appID, from: from, to: to)
        var rows: [(day: String, kind: DivergenceSubject, subject: String, sent: Int64, accepted: Int64)] = []
        for (channel, days) in live.broadcasts {
            for (day, counts) in days { rows.append((day, .channel, channel, counts.sent, counts.accepted)) }
        }
        for (pushType, days) in live.pushes {
            for (day, accepted) in days { rows.append((day, .pushType, pushType, accepted, accepted)) }
        }
        guard !rows.isEmpty else { return }
        try await self.client.guardedQuery(
            """
            INSERT INTO livecast_daily_counts (app_id, day, subject_kind, subject, sent, accepted)
            SELECT \(appID), d::date, k, s, n, a
            FROM unnest(\(rows.map(\.day))::text[], \(rows.map(\.kind.rawValue))::text[], \(rows.map(\.subject))::text[],
                        \(rows.map(\.sent))::bigint[], \(rows.map(\.accepted))::bigint[]) AS r(d, k, s, n, a)
            ON CONFLICT (app_id, day, subject_kind, subject) DO UPDATE SET
                sent = greatest(livecast_daily_counts.sent, excluded.sent), accepted = greatest(livecast_daily_counts.accepted, excluded.accepted)
            """,
            logger: self.logger
        )
    }

    /// Livecast's figures as its records still hold them: broadcasts per channel and day (`deliveries`), and device
    /// pushes APNs accepted per day of the update's creation.
    private func liveCounts(
        appID: Int64,
        from: String,
        to: String
    ) async throws -> (broadcasts: [String: [String: DeliveryReport.LivecastBroadcasts]], pushes: [String: [String: Int64]]) {
        var broadcasts: [String: [String: DeliveryReport.LivecastBroadcasts]] = [:]
        var pushes: [String: [String: Int64]] = [:]
        let sent = try await self.client.guardedQuery(
            """
            SELECT d.target, to_char((d.attempted_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD'), count(*), count(*) FILTER (WHERE d.status = 200)
            FROM deliveries d JOIN updates u ON u.id = d.update_id
            WHERE u.app_id = \(appID) AND d.target_kind = \(unescaped: DeliveryTargetKind.channel.sql)
              AND d.attempted_at >= (\(from)::date)::timestamp AT TIME ZONE 'UTC'
              AND d.attempted_at < (\(to)::date + 1)::timestamp AT TIME ZONE 'UTC'
            GROUP BY 1, 2
            """,
            logger: self.logger
        )
        for try await (channelID, day, attempts, accepted) in sent.decode((String, String, Int64, Int64).self) {
            broadcasts[channelID, default: [:]][day] = DeliveryReport.LivecastBroadcasts(sent: attempts, accepted: accepted)
        }
        let accepted = try await self.client.guardedQuery(
            """
            SELECT to_char((u.created_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD'),
                sum(u.sent_count - (SELECT count(*) FROM deliveries d WHERE d.update_id = u.id AND d.target_kind = \(unescaped: DeliveryTargetKind.channel.sql) AND d.status = 200))::bigint
            FROM updates u
            WHERE u.app_id = \(appID) AND u.sent_count > 0
              AND u.created_at >= (\(from)::date)::timestamp AT TIME ZONE 'UTC'
              AND u.created_at < (\(to)::date + 1)::timestamp AT TIME ZONE 'UTC'
            GROUP BY 1
            """,
            logger: self.logger
        )
        for try await (day, count) in accepted.decode((String, Int64).self) where count > 0 {
            // Livecast sends Live Activity device pushes only.
            pushes["liveactivity", default: [:]][day] = count
        }
        return (broadcasts, pushes)
    }

    /// Records the report's flagged channels and push types, each day and subject once; each new one writes a
    /// `delivery.diverged` event in the same transaction.
    /// - Returns: How many were new.
    @discardableResult
    package func flag(_ report: DeliveryReport, appID: Int64) async throws -> Int {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var rows: [(day: String, kind: DivergenceSubject, subject: String, data: String)] = []
        for day in report.days {
            for channel in day.channels where channel.flagged {
                let data = String(decoding: try encoder.encode(channel), as: UTF8.self)
                rows.append((day.day, .channel, channel.channelId, data))
            }
            for pushType in day.pushTypes where pushType.flagged {
                let data = String(decoding: try encoder.encode(pushType), as: UTF8.self)
                rows.append((day.day, .pushType, pushType.pushType, data))
            }
        }
        guard !rows.isEmpty else { return 0 }
        let inserted = try await self.client.guardedQuery(
            """
            INSERT INTO delivery_divergences (app_id, day, subject_kind, subject, data)
            SELECT \(appID), d::date, k, s, j::jsonb
            FROM unnest(\(rows.map(\.day))::text[], \(rows.map(\.kind.rawValue))::text[], \(rows.map(\.subject))::text[], \(rows.map(\.data))::text[])
                AS r(d, k, s, j)
            ON CONFLICT DO NOTHING
            RETURNING day
            """,
            logger: self.logger
        )
        return inserted.count
    }
}
