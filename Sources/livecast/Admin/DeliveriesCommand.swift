import ArgumentParser
import LivecastCore
import LivecastStore

/// `livecast deliveries find`.
struct DeliveriesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deliveries",
        abstract: "Search the delivery log.",
        subcommands: [Find.self]
    )

    struct Find: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Find pushes by apns-id, token or update, successes included.",
            discussion: """
                One line a push: its update, target, outcome (delivered, failed, retrying, gaveUp, pending, superseded), \
                APNs' status and reason, and its apns-id. With --apns-id, the push Livecast sent with that id (an id \
                Livecast did not make finds nothing); with --token, the pushes to that device token or channel; with \
                --update-id alone, that update's pushes; with none of these, the stored failures and broadcasts. Exits 1 \
                when nothing is found.
                """
        )

        @Option(help: "A push's apns-id (a broadcast's apns-request-id).")
        var apnsId: String?

        @Option(help: "A device token in hex, or a channel id.")
        var token: String?

        @Option(help: "An update's id.")
        var updateId: Int64?

        @Option(help: "APNs' HTTP status.")
        var status: Int?

        @Option(help: "APNs' reason, such as BadDeviceToken.")
        var reason: String?

        @OptionGroup var list: AppListOptions<PushRows>

        func run() async throws {
            var query = DeliveryLog.Query()
            query.token = self.token
            query.updateID = self.updateId
            query.status = self.status
            query.reason = self.reason
            query.limit = self.list.limit
            if let apnsId = self.apnsId {
                guard let id = PushID(apnsId) else {
                    print("no push of Livecast's has apns-id \(apnsId)")
                    throw ExitCode(1)
                }
                query.apnsID = id
            }
            let page = try await self.list.withApp { client, app in
                try await DeliveryLog(client: client, logger: .disabled).find(query, appID: app.id)
            }
            for record in page.records { print("\(RecordText.time(record.at))  \(RecordText.push(record))") }
            if page.records.isEmpty {
                print("nothing found")
                throw ExitCode(1)
            }
        }
    }
}
