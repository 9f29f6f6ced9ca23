import Foundation
import LivecastStore

/// Reads the CSV files of Apple's data export, strictly: the header must name exactly the columns Apple documents for
/// the dataset (in any order), every row must have them all, dates are `yyyy-MM-dd` (a time after the date is
/// ignored), and counts are integers (`-1` included). A file that breaks any of it is refused whole, so a changed
/// format is a recorded error rather than wrong figures.
enum AppleExportCSV {
    /// The columns of a dataset's file ("Exporting delivery metrics logs", "Exporting broadcast push notification
    /// metrics").
    static func columns(_ dataset: AppleDataset) -> [String] {
        switch dataset {
        case .deliveryMetrics: ["Push Type", "Status", "Date (UTC)", "Count"]
        case .channelMetrics: ["Date (UTC)", "Broadcasts Published", "Broadcasts Delivered", "Total Subscriptions"]
        case .applicationMetrics: ["Date (UTC)", "Broadcasts Published", "Broadcasts Delivered", "Total Subscriptions", "Unique Subscribers"]
        }
    }

    /// The rows of a dataset's file.
    /// - Parameter channelID: The channel of a channel export.
    /// - Throws: ``AppleExportError`` naming the first problem.
    static func rows(_ text: String, dataset: AppleDataset, channelID: String?) throws(AppleExportError) -> AppleExportRows {
        var lines = Self.records(text)
        guard !lines.isEmpty else { throw AppleExportError("the CSV is empty: it has no header") }
        let header = lines.removeFirst().map { $0.trimmingCharacters(in: .whitespaces) }
        let expected = Self.columns(dataset)
        if let unknown = header.first(where: { !expected.contains($0) }) {
            throw AppleExportError("the CSV has a column Apple does not document for \(dataset.rawValue): \"\(unknown)\"; nothing was stored")
        }
        if let missing = expected.first(where: { !header.contains($0) }) {
            throw AppleExportError("the CSV lacks the column \"\(missing)\" of \(dataset.rawValue); nothing was stored")
        }
        let index = Dictionary(header.enumerated().map { ($0.element, $0.offset) }, uniquingKeysWith: { first, _ in first })
        var broadcasts: [AppleBroadcastDay] = []
        var deliveries: [AppleDeliveryDay] = []
        for (number, fields) in lines.enumerated() {
            let line = number + 2
            guard fields.count == header.count else {
                throw AppleExportError("line \(line) of the CSV has \(fields.count) fields, not \(header.count)")
            }
            func field(_ name: String) -> String { fields[index[name]!].trimmingCharacters(in: .whitespaces) }
            func count(_ name: String) throws(AppleExportError) -> Int64 {
                guard let value = Int64(field(name)), value >= -1 else {
                    throw AppleExportError("line \(line) of the CSV: \"\(name)\" is not a count: \"\(field(name).prefix(40))\"")
                }
                return value
            }
            let day = try Self.day(field("Date (UTC)"), line: line)
            switch dataset {
            case .deliveryMetrics:
                let pushType = Self.normalized(field("Push Type"))
                let status = field("Status").lowercased()
                guard !pushType.isEmpty, !status.isEmpty else { throw AppleExportError("line \(line) of the CSV has no push type or status") }
                deliveries.append(AppleDeliveryDay(day: day, pushType: pushType, status: status, count: try count("Count")))
            case .channelMetrics, .applicationMetrics:
                broadcasts.append(
                    AppleBroadcastDay(
                        day: day,
                        published: try count("Broadcasts Published"),
                        delivered: try count("Broadcasts Delivered"),
                        subscriptions: try count("Total Subscriptions"),
                        uniqueSubscribers: dataset == .applicationMetrics ? try count("Unique Subscribers") : nil
                    )
                )
            }
        }
        return dataset == .deliveryMetrics ? .deliveries(deliveries) : .broadcasts(channelID: channelID, broadcasts)
    }

    /// A push type as Livecast names it: lowercase, without spaces, hyphens or underscores (`Live Activity` and
    /// `liveactivity` are one).
    static func normalized(_ pushType: String) -> String {
        String(pushType.lowercased().filter { $0 != " " && $0 != "-" && $0 != "_" })
    }

    /// `yyyy-MM-dd` from a date field; a time after it (`T…`, or a space) is ignored.
    private static func day(_ text: String, line: Int) throws(AppleExportError) -> String {
        let date = String(text.prefix(10))
        let rest = text.dropFirst(10)
        guard date.wholeMatch(of: /\d{4}-\d{2}-\d{2}/) != nil, rest.isEmpty || rest.first == "T" || rest.first == " " else {
            throw AppleExportError("line \(line) of the CSV: \"Date (UTC)\" is not a yyyy-MM-dd date: \"\(text.prefix(40))\"")
        }
        return date
    }

    /// The file's records and their fields (RFC 4180: quoted fields may hold commas, quotes and line breaks); blank
    /// lines are skipped, and a byte-order mark before the header is dropped.
    static func records(_ text: String) -> [[String]] {
        var records: [[String]] = []
        var fields: [String] = []
        var field = ""
        var quoted = false
        var characters = text.hasPrefix("\u{FEFF}") ? Substring(text.dropFirst()) : Substring(text)
        while let character = characters.popFirst() {
            if quoted {
                if character == "\"" {
                    if characters.first == "\"" {
                        field.append("\"")
                        characters.removeFirst()
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(character)
                }
            } else if character == "\"" {
                quoted = true
            } else if character == "," {
                fields.append(field)
                field = ""
            } else if character == "\n" || character == "\r\n" || character == "\r" {
                fields.append(field)
                if fields != [""] { records.append(fields) }
                fields = []
                field = ""
            } else {
                field.append(character)
            }
        }
        fields.append(field)
        if fields != [""] { records.append(fields) }
        return records
    }
}
