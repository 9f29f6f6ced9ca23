package import APNs
import Foundation
import LivecastStore
import Logging
package import PostgresNIO

/// Compares an app's channel registry with APNs' own list (`all-channels`) and settles the differences:
/// - a channel APNs has and the registry does not (or holds as retired or missing) is an **orphan**: reported, and
///   deleted at APNs only when asked (`deleteOrphans`), each id checked against the registry again just before;
/// - an active registry channel APNs no longer lists is marked **missing** (nothing is broadcast to it again);
/// - a registry row in state `orphan` (APNs created it, recording it for its feed failed) that APNs still has is
///   reported, and with `deleteOrphans` retired (deleted at APNs, kept as retired); one APNs no longer has is marked
///   retired, as there is nothing left to clean.
///
/// APNs documents no paging for `all-channels`; channels recorded within a minute before the listing are left
/// alone, so one created while the listing runs is not taken for missing.
package struct ChannelReconciler: Sendable {
    private let channels: Channels
    private let registry: ChannelRegistry

    /// - Parameter apns: The APNs client of the app's team and environment.
    package init(database: PostgresClient, apns: APNsClient, logger: Logger) {
        let channels = Channels(client: database, logger: logger)
        self.channels = channels
        self.registry = ChannelRegistry(channels: channels, apns: apns, logger: logger)
    }

    /// Reconciles one app's channels.
    /// - Parameter deleteOrphans: Delete orphans at APNs (otherwise they are only reported).
    /// - Throws: ``APNsRefusal`` when APNs does not list the channels; database errors.
    package func reconcile(appID: Int64, bundleID: String, environment: String, deleteOrphans: Bool) async throws -> ChannelReconciliation {
        let listedAt = Date()
        let atAPNs = Set(try await self.registry.listAtAPNs(bundleID: bundleID))
        var result = ChannelReconciliation(bundleID: bundleID, environment: environment)
        result.atAPNs = atAPNs.count
        let recorded = try await self.channels.recorded(appID: appID)
        result.activeInRegistry = recorded.values.filter { $0.state == .active }.count

        for channelID in atAPNs.sorted() {
            let row = recorded[channelID]
            switch row?.state {
            case .active?:
                continue
            case .orphan?:
                var finding = ChannelReconciliation.Finding(kind: .recordedOrphan, channelID: channelID, action: "kept")
                if deleteOrphans {
                    do {
                        _ = try await self.registry.retire(appID: appID, bundleID: bundleID, channelID: channelID, force: true)
                        finding.action = "retired (deleted at APNs)"
                    } catch let error as StoreError {
                        finding.action = "not retired: \(error.message)"
                    } catch let refusal as APNsRefusal {
                        finding.action = "not retired: \(refusal.message)"
                    }
                }
                result.findings.append(finding)
            default:
                var finding = ChannelReconciliation.Finding(kind: .orphanAtAPNs, channelID: channelID, feedKey: row?.feedKey, action: "kept")
                if deleteOrphans { finding.action = await self.deleteOrphan(appID: appID, bundleID: bundleID, channelID: channelID) }
                result.findings.append(finding)
            }
        }
        let settled = listedAt.addingTimeInterval(-60)
        for (channelID, row) in recorded.sorted(by: { $0.key < $1.key }) where !atAPNs.contains(channelID) && row.createdAt < settled {
            switch row.state {
            case .active:
                try await self.channels.mark(appID: appID, channelID: channelID, from: .active, to: .missing)
                result.findings.append(.init(kind: .missingAtAPNs, channelID: channelID, feedKey: row.feedKey, action: "marked missing"))
            case .orphan:
                try await self.channels.mark(appID: appID, channelID: channelID, from: .orphan, to: .retired)
                result.findings.append(.init(kind: .recordedOrphanGone, channelID: channelID, feedKey: row.feedKey, action: "marked retired"))
            default:
                continue
            }
        }
        return result
    }

    /// Deletes an orphan at APNs, unless the registry took it up as active meanwhile. - Returns: what was done.
    private func deleteOrphan(appID: Int64, bundleID: String, channelID: String) async -> String {
        do {
            if try await self.channels.recorded(appID: appID, channelID: channelID)[channelID]?.state == .active {
                return "kept: the registry recorded it meanwhile"
            }
        } catch {
            return "not deleted: \(error)"
        }
        let (outcome, deleted) = await self.registry.deleteAtAPNs(bundleID: bundleID, channelID: channelID)
        guard deleted else {
            return "not deleted: APNs answered \(outcome.status.map(String.init) ?? "nothing")\(outcome.reason.map { " \($0.rawValue)" } ?? "")"
        }
        return ChannelReconciliation.Finding.deletedAtAPNs
    }
}
