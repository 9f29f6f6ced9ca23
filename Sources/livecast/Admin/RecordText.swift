import Foundation
import LivecastCore
import LivecastStore

/// How the CLI prints times and pushes of the records.
enum RecordText {
    /// A UNIX time in ISO 8601, UTC.
    static func time(_ seconds: Int64) -> String {
        Date(timeIntervalSince1970: TimeInterval(seconds)).formatted(.iso8601)
    }

    /// One push: `update 42 (update, timestamp T) → activity TOKEN: delivered 200 apns-id ID`, with the reason and
    /// tries when it did not get through.
    static func push(_ record: PushRecord) -> String {
        let target =
            switch record.targetKind {
            case .activity: "activity \(record.activityID ?? "-") token \(record.target)"
            case .pushToStart: "device \(record.deviceID ?? "-") push-to-start token \(record.target)"
            case .channel: "channel \(record.target)"
            case .renewal: "renewal of activity \(record.activityID ?? "-") on device \(record.deviceID ?? "-") push-to-start token \(record.target)"
            }
        var line = "update \(record.updateID) (\(record.event), timestamp \(record.timestamp)) → \(target): \(record.outcome.rawValue)"
        if let status = record.status { line += " \(status)" }
        if let reason = record.reason { line += " \(reason)" }
        if let attempts = record.attempts { line += " after \(attempts) tries" }
        return line + " apns-id \(record.apnsID)"
    }
}
