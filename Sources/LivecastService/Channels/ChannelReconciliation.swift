/// What comparing the registry with APNs' `all-channels` found for one app, and what was done about it.
package struct ChannelReconciliation: Sendable, Hashable {
    /// One difference between the registry and APNs.
    package struct Finding: Sendable, Hashable {
        /// The kind of difference.
        package enum Kind: String, Sendable, Hashable {
            /// APNs has the channel; the registry does not (or holds it retired or missing): it counts against
            /// APNs' cap and nothing sends to it.
            case orphanAtAPNs = "orphan"
            /// A registry row in state `orphan` (created at APNs, never attached to its feed) that APNs still has.
            case recordedOrphan = "recorded orphan"
            /// A registry row in state `orphan` that APNs no longer has: marked retired, nothing is left to clean.
            case recordedOrphanGone = "recorded orphan gone"
            /// An active registry channel APNs no longer has: marked `missing`; nothing is broadcast to it.
            case missingAtAPNs = "missing"
        }

        package var kind: Kind
        package var channelID: String
        /// The feed the registry attaches the channel to.
        package var feedKey: String?
        /// What was done: `deleted at APNs`, `kept`, `marked missing`, `marked retired`, or why it failed.
        package var action: String

        /// `orphan dHN0…: deleted at APNs`, with the feed when there is one.
        package var line: String {
            "\(self.kind.rawValue) \(self.channelID)\(self.feedKey.map { " (feed \($0))" } ?? ""): \(self.action)"
        }
    }

    package var bundleID: String
    package var environment: String
    /// How many channels APNs listed.
    package var atAPNs = 0
    /// How many the registry holds as active.
    package var activeInRegistry = 0
    package var findings: [Finding] = []

    package init(bundleID: String, environment: String) {
        self.bundleID = bundleID
        self.environment = environment
    }

    /// `com.example.game (sandbox): 3 channels at APNs, 2 active in the registry; 1 orphans (1 deleted), 1 missing,
    /// 0 recorded orphans (0 retired)`.
    package var summary: String {
        func count(_ kind: Finding.Kind) -> Int { self.findings.filter { $0.kind == kind }.count }
        let deleted = self.findings.filter { $0.kind == .orphanAtAPNs && $0.action == Finding.deletedAtAPNs }.count
        let recorded = count(.recordedOrphan) + count(.recordedOrphanGone)
        let retired = self.findings.filter { ($0.kind == .recordedOrphan && $0.action.hasPrefix("retired")) || $0.kind == .recordedOrphanGone }.count
        return "\(self.bundleID) (\(self.environment)): \(self.atAPNs) channels at APNs, \(self.activeInRegistry) active in the registry; "
            + "\(count(.orphanAtAPNs)) orphans (\(deleted) deleted), \(count(.missingAtAPNs)) missing, \(recorded) recorded orphans (\(retired) retired)"
    }
}

extension ChannelReconciliation.Finding {
    static let deletedAtAPNs = "deleted at APNs"
}
