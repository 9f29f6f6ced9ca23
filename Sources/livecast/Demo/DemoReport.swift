import APNsEmulator
import Foundation
import LivecastCore

/// What the simulated devices show after the game, held against what they should show.
struct DemoReport: Sendable {
    /// What every device should show.
    struct Expectation: Sendable {
        /// The end's content state.
        var content: JSONValue
        /// The end's timestamp: the last one each device applies.
        var endTimestamp: Int
        /// When the ended activities leave the Lock Screen.
        var dismissalDate: Int
    }

    /// The devices as they are after the end.
    let devices: [DeviceSnapshot]
    let expected: Expectation
    /// What went wrong in the game itself, such as a late update that was accepted.
    let problems: [String]

    /// Everything that is wrong: the game's problems, then each device's. Empty when every device shows one
    /// activity with the final content, ended, with the dismissal date, and was never sent an update older than one
    /// it showed.
    var failures: [String] {
        self.problems + self.devices.flatMap { device in self.failures(of: device).map { "device \(Self.shortID(device)): \($0)" } }
    }

    private func failures(of device: DeviceSnapshot) -> [String] {
        guard let activity = device.activities.first else { return ["no activity started"] }
        var failures: [String] = []
        if device.activities.count > 1 { failures.append("\(device.activities.count) activities started, not 1") }
        if activity.state != .ended { failures.append("the activity is \(activity.state.rawValue), not ended") }
        if activity.contentState != self.expected.content { failures.append("shows \(Self.content(activity)), not the final score") }
        if activity.lastTimestamp != self.expected.endTimestamp {
            failures.append("last applied timestamp \(activity.lastTimestamp), not the end's \(self.expected.endTimestamp)")
        }
        if activity.dismissalDate != self.expected.dismissalDate {
            failures.append("dismissal date \(activity.dismissalDate.map(String.init) ?? "none"), not \(self.expected.dismissalDate)")
        }
        let backwards = activity.ignoredPushes.filter { $0.reason == .olderTimestamp && ($0.timestamp ?? 0) < ($0.shownTimestamp ?? 0) }
        if !backwards.isEmpty { failures.append("was sent \(backwards.count) update(s) older than what it showed") }
        return failures
    }

    /// One row per device: device, iOS, how it follows the feed, state, content, dismissal date.
    var table: String {
        let header = ["device", "iOS", "follows", "state", "content", "dismissal"]
        let rows = self.devices.map { device -> [String] in
            let activity = device.activities.first
            return [
                Self.shortID(device),
                device.osVersion,
                activity.map { $0.channelId != nil ? "channel" : "token" } ?? "-",
                activity?.state.rawValue ?? "none",
                activity.map(Self.content) ?? "-",
                activity?.dismissalDate.map(Self.clockTime) ?? "-",
            ]
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        return ([header] + rows)
            .map { row in row.indices.map { row[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  ") }
            .map { $0.trimmingTrailingSpaces() }
            .joined(separator: "\n")
    }

    /// `HH:MM:SS UTC` of a UNIX time.
    static func clockTime(_ seconds: Int) -> String {
        let day = seconds % 86_400
        let parts = [day / 3600, day % 3600 / 60, day % 60].map { $0 < 10 ? "0\($0)" : "\($0)" }
        return parts.joined(separator: ":") + " UTC"
    }

    private static func shortID(_ device: DeviceSnapshot) -> String {
        String(device.id.prefix(8))
    }

    /// The score as `2-1 90'`, or the raw JSON when it is not one.
    private static func content(_ activity: ActivitySnapshot) -> String {
        DemoScore(json: activity.contentState)?.text ?? "\(activity.contentState)"
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        String(self.reversed().drop { $0 == " " }.reversed())
    }
}
