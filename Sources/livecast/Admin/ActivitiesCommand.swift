import ArgumentParser
import LivecastStore

/// `livecast activities show`.
struct ActivitiesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "activities",
        abstract: "Show what happened to an activity.",
        subcommands: [Show.self]
    )

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show an activity's state, token or channel, and its timeline, oldest first.",
            discussion: """
                The timeline holds its registration, each token registered or invalidated (with the reason), every push \
                sent to it with its apns-id and APNs' answer (the latest 1,000), and when it went stale, ended and was \
                dismissed. Times are UTC.
                """
        )

        @Argument(help: "The activity's id, as ActivityKit gave it to the app.")
        var activityId: String

        @OptionGroup var app: AppSelection
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var config: ConfigFileOption

        func run() async throws {
            let record = try await self.database.withApp(self.app, try self.config.settings()) { client, app in
                try await ActivityRecord.read(appID: app.id, activityID: self.activityId, client: client, logger: .disabled)
            }
            guard let record else { throw ValidationError("no activity \(self.activityId)") }
            for line in Self.lines(record) { print(line) }
        }

        static func lines(_ record: ActivityRecord) -> [String] {
            var lines = [
                "activity \(record.activityID): \(record.state.rawValue), \(record.kind)-based, \(record.attributesType)"
                    + (record.feedKey.map { ", feed \($0)" } ?? ""),
                record.kind == .channel ? "channel: \(record.channelID ?? "-")" : "token: \(record.token ?? "none live")",
            ]
            if let deviceID = record.deviceID { lines.append("device: \(deviceID)") }
            for event in record.timeline {
                var line = "\(RecordText.time(event.at))  \(event.kind.rawValue)"
                if let push = event.push {
                    line += "  " + RecordText.push(push)
                } else {
                    if let token = event.token { line += "  \(token)" }
                    if let generation = event.generation { line += " (generation \(generation))" }
                    if let reason = event.reason { line += ": \(reason)" }
                }
                lines.append(line)
            }
            return lines
        }
    }
}
