import Foundation
import LivecastCore

/// Shapes the API's answers for the templates: moments, durations, progress, and JSON as Mustache reads it.
enum ConsoleView {
    /// A moment for the `time` partial: ISO 8601 for the script (the viewer's zone), UTC text without it.
    static func time(_ seconds: Int64?) -> [String: Any]? {
        guard let seconds else { return nil }
        return Self.time(iso: Date(timeIntervalSince1970: TimeInterval(seconds)).formatted(.iso8601))
    }

    /// A moment the API wrote in ISO 8601 (UTC), for the `time` partial.
    static func time(iso: String?) -> [String: Any]? {
        guard let iso else { return nil }
        return ["iso": iso, "text": iso.replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: " UTC")]
    }

    /// `42 s`, `3 min`, `2 h 5 min`.
    static func duration(_ seconds: Int64) -> String {
        switch seconds {
        case ..<120: "\(seconds) s"
        case ..<7200: "\(seconds / 60) min"
        default: "\(seconds / 3600) h \(seconds % 3600 / 60) min"
        }
    }

    /// How far an update is: its targets handled out of all it has, in percent (100 once nothing is pending).
    static func percent(sent: Int, failed: Int, pending: Int) -> Int {
        let total = sent + failed + pending
        return total == 0 || pending == 0 ? 100 : (sent + failed) * 100 / total
    }

    /// A JSON object's members as Mustache reads them, `null`s left out (so a missing value is a false section).
    static func object(_ json: JSONValue?) -> [String: Any] {
        guard case .object(let members) = json else { return [:] }
        return members.compactMapValues(Self.value)
    }

    /// A JSON array's objects (``object(_:)``).
    static func objects(_ json: JSONValue?) -> [[String: Any]] {
        guard case .array(let items) = json else { return [] }
        return items.map(Self.object)
    }

    /// Failures by reason as a list, most first.
    static func reasons(_ json: JSONValue?) -> [[String: Any]] {
        guard case .object(let members) = json else { return [] }
        let counts: [(reason: String, count: Int)] = members.compactMap { reason, count in count.intValue.map { (reason, $0) } }
        let ordered = counts.sorted { $0.count == $1.count ? $0.reason < $1.reason : $0.count > $1.count }
        return ordered.map { ["reason": $0.reason, "count": $0.count] as [String: Any] }
    }

    private static func value(_ json: JSONValue) -> Any? {
        switch json {
        case .null: nil
        case .bool(let value): value
        case .int(let value): value
        case .double(let value): value
        case .string(let value): value
        case .array(let items): items.compactMap(Self.value)
        case .object: Self.object(json)
        }
    }
}
