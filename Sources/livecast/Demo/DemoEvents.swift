import Foundation
import LivecastCore

/// What the game told the backend: the app's event feed (`GET /v1/apps/{bundleId}/events`), read as a backend
/// would, page by page with its cursor, until the end's `update.completed` is in it.
struct DemoEvents: Sendable {
    let api: DemoAPIClient
    let backendKey: String

    /// The events, oldest first. - Throws: ``DemoFailure`` when the end's `update.completed` does not come within
    /// `timeout`, or the feed answers an error.
    func readUntilTheEndIsReported(timeout: Duration = .seconds(30)) async throws -> [JSONValue] {
        var events: [JSONValue] = []
        var cursor = "0-0"
        let deadline = ContinuousClock.now + timeout
        while !events.contains(where: Self.isTheEndsCompletion) {
            guard ContinuousClock.now < deadline else {
                throw DemoFailure("the event feed did not report the end's update.completed within \(timeout)")
            }
            let page = try await self.api.expectSuccess("events", "GET", "/events?after=\(cursor)&limit=1000", key: self.backendKey)
            events += page.json["events"].items
            cursor = page.json["next"]?.stringValue ?? cursor
            if page.json["hasMore"] != .bool(true) { try await Task.sleep(for: .milliseconds(100)) }
        }
        return events
    }

    /// `41 events: 12 activity.registered, 4 start.sent, …`, in the order each type first happened, with who ended
    /// the activities.
    static func summary(_ events: [JSONValue]) -> String {
        var order: [String] = []
        var counts: [String: Int] = [:]
        for event in events {
            var type = event["type"]?.stringValue ?? "?"
            if let endedBy = event["data"]?["endedBy"]?.stringValue { type += " (by \(endedBy))" }
            if counts[type] == nil { order.append(type) }
            counts[type, default: 0] += 1
        }
        return "\(events.count) events: " + order.map { "\(counts[$0] ?? 0) \($0)" }.joined(separator: ", ")
    }

    private static func isTheEndsCompletion(_ event: JSONValue) -> Bool {
        event["type"]?.stringValue == "update.completed" && event["data"]?["event"]?.stringValue == "end"
            && event["data"]?["feedKey"] != nil
    }
}
