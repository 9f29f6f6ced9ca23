import Foundation

/// The emulator's data-export service: tokens, requests and their CSV files, over what the devices did
/// (``DeliveryTally``). Held in the emulator's state, behind its lock.
struct DataExportBook {
    /// The datasets of Apple's data export.
    enum Dataset: String {
        case deliveryMetrics = "deliverymetrics"
        case channelMetrics = "broadcastchannelmetrics"
        case applicationMetrics = "broadcastapplicationmetric"
    }

    /// One requested export.
    struct Export {
        let id: String
        let bundleID: String
        let requestedAt: Int
        /// What its status URL answers once processed: `SUCCESS`, `FAILED` or `EXPIRED`.
        let outcome: String
        /// The CSV, computed when it was requested, as Apple's holds what was logged by then.
        let csv: String
        /// Status polls it still answers `PROCESSING` to.
        var processingPolls: Int
    }

    /// The same request: Apple answers it with the same status URL within 24 hours.
    struct RequestKey: Hashable {
        let bundleID: String
        let dataset: String
        let channelID: String?
        let startDay: Int
        let endDay: Int
    }

    /// `https://host:port` of the push listener, where status and data URLs point.
    var baseURL = "https://localhost"
    var tally = DeliveryTally()
    /// Accepted tokens by their text.
    var tokens: [String: DataExportToken] = [:]
    var fault = DataExportFault.none
    private var requests: [RequestKey: String] = [:]
    private(set) var exports: [String: Export] = [:]

    /// The export asked for: the one made for the same request within 24 hours, or a new one.
    mutating func export(
        _ key: RequestKey,
        dataset: Dataset,
        now: Int,
        processingPolls: Int,
        privacyThreshold: Int
    ) -> Export {
        if let id = self.requests[key], let export = self.exports[id], now - export.requestedAt < 86400 {
            return export
        }
        var csv = self.csv(dataset, key: key, privacyThreshold: privacyThreshold)
        if self.fault == .unknownColumn {
            csv =
                csv.split(separator: "\n").enumerated().map { $0.offset == 0 ? $0.element + ",Region" : $0.element + ",EU" }
                .joined(separator: "\n") + "\n"
        }
        let outcome =
            switch self.fault {
            case .failed: "FAILED"
            case .expired: "EXPIRED"
            case .none, .unknownColumn: "SUCCESS"
            }
        let export = Export(
            id: UUID().uuidString.lowercased(),
            bundleID: key.bundleID,
            requestedAt: now,
            outcome: outcome,
            csv: csv,
            processingPolls: processingPolls
        )
        self.exports[export.id] = export
        // A failed request is not handed out again: asking anew is how a client recovers.
        if outcome == "SUCCESS" { self.requests[key] = export.id }
        return export
    }

    /// Counts one status poll of an export. - Returns: Its status now.
    mutating func poll(_ id: String) -> Export? {
        guard var export = self.exports[id] else { return nil }
        if export.processingPolls > 0 {
            export.processingPolls -= 1
            self.exports[id] = export
            return Export(id: id, bundleID: export.bundleID, requestedAt: export.requestedAt, outcome: "PROCESSING", csv: "", processingPolls: 0)
        }
        return export
    }

    /// The CSV of a dataset over the request's days, in the columns Apple's documentation names.
    private func csv(_ dataset: Dataset, key: RequestKey, privacyThreshold: Int) -> String {
        let days = key.startDay...key.endDay
        var lines: [String] = []
        switch dataset {
        case .deliveryMetrics:
            lines.append("Push Type,Status,Date (UTC),Count")
            let byDay = self.tally.devicePushes[key.bundleID] ?? [:]
            for day in days {
                for (push, count) in (byDay[day] ?? [:]).sorted(by: { ($0.key.pushType, $0.key.status) < ($1.key.pushType, $1.key.status) }) {
                    lines.append("\(push.pushType),\(push.status),\(Self.date(day)),\(count)")
                }
            }
        case .channelMetrics:
            lines.append("Date (UTC),Broadcasts Published,Broadcasts Delivered,Total Subscriptions")
            let byDay = self.tally.channels[key.bundleID]?[key.channelID ?? ""] ?? [:]
            for day in days {
                guard let figures = byDay[day] else { continue }
                if figures.subscriptions < privacyThreshold {
                    lines.append("\(Self.date(day)),-1,-1,-1")
                } else {
                    lines.append("\(Self.date(day)),\(figures.published),\(figures.delivered),\(figures.subscriptions)")
                }
            }
        case .applicationMetrics:
            lines.append("Date (UTC),Broadcasts Published,Broadcasts Delivered,Total Subscriptions,Unique Subscribers")
            let channels = self.tally.channels[key.bundleID] ?? [:]
            for day in days {
                let figures = channels.values.compactMap { $0[day] }
                guard !figures.isEmpty else { continue }
                let published = figures.reduce(0) { $0 + $1.published }
                let delivered = figures.reduce(0) { $0 + $1.delivered }
                let subscriptions = figures.reduce(0) { $0 + $1.subscriptions }
                let unique = self.tally.subscribers[key.bundleID]?[day]?.count ?? 0
                lines.append("\(Self.date(day)),\(published),\(delivered),\(subscriptions),\(unique)")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `yyyy-MM-dd` of a day since 1970.
    static func date(_ day: Int) -> String {
        Self.formatter.string(from: Date(timeIntervalSince1970: TimeInterval(day) * 86400))
    }

    /// The day since 1970 of a `yyyy-MM-dd` date, or `nil`.
    static func day(_ text: String) -> Int? {
        guard text.utf8.count == 10, let date = Self.formatter.date(from: text) else { return nil }
        return Int(date.timeIntervalSince1970) / 86400
    }

    /// An ISO 8601 time of a device-clock second.
    static func iso(_ seconds: Int) -> String {
        Date(timeIntervalSince1970: TimeInterval(seconds)).formatted(.iso8601)
    }

    private static var formatter: DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter
    }
}
