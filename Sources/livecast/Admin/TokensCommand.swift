import ArgumentParser
import Foundation
import HTTPTypes
import LivecastServer
import LivecastStore

/// `livecast tokens import|show`.
struct TokensCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tokens",
        abstract: "Bulk-import push-to-start tokens or activities, and show a device's tokens.",
        subcommands: [Import.self, Show.self]
    )

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Import a file of push-to-start tokens or activities, each row as its single registration would.",
            discussion: """
                Rows are the bodies of PUT /v1/apps/{bundleId}/push-to-start-tokens/{deviceId}/{attributesType} with deviceId \
                and attributesType, or of PUT /v1/apps/{bundleId}/activities/{activityId} with activityId. A later row for the \
                same device and type (or activity) wins. Each refused row is printed on stdout (row INDEX: STATUS CODE (FIELD) \
                MESSAGE, INDEX from 0), then a summary; the exit status is 1 if any row was refused. Progress goes to stderr.
                """
        )

        @Argument(
            help:
                "A JSON array of rows or NDJSON (one row a line): .ndjson and .jsonl files are NDJSON, .json files an array, others are told by their first character."
        )
        var file: String

        @Option(help: "What the rows register: push-to-start or activities.")
        var kind: RegistrationImporter.Kind = .pushToStart

        @OptionGroup var app: AppSelection
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var config: ConfigFileOption

        func run() async throws {
            guard let contents = FileManager.default.contents(atPath: self.file) else { throw ValidationError("cannot read \(self.file)") }
            let bytes = Array(contents)
            let text: ImportText
            do {
                text = try ImportText(bytes, format: .init(fileName: self.file, contents: bytes))
            } catch let error as APIError {
                throw ValidationError("\(self.file): \(error.message)")
            }
            let progress = ImportProgress(total: text.count)
            let (app, report) = try await self.database.withApp(self.app, try self.config.settings()) { client, app in
                do {
                    let report = try await RegistrationImporter(database: client, logger: .disabled).run(self.kind, appID: app.id, text: text) {
                        progress.show(rowsDone: $0)
                    }
                    return (app, report)
                } catch let error as APIError where error.status == .badRequest {
                    // A JSON array with a row that is not JSON, found before anything is imported. (The database going
                    // away midway is no fault of the file: its error says how far the import got.)
                    throw ValidationError("\(self.file): \(error.message)")
                }
            }
            progress.finish()
            for row in report.results {
                guard let error = row.error else { continue }
                print("row \(row.index): \(error.status) \(error.code)\(error.field.map { " (\($0))" } ?? "") \(error.message)")
            }
            let counts = report.counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            print("imported \(text.count) rows into \(app.bundleID) (\(app.environment)) in \(progress.summary(rows: text.count)): \(counts)")
            if report.failed > 0 { throw ExitCode.failure }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a device's push-to-start tokens: attributes type, token, live or why it was invalidated."
        )

        @Option(help: "The device's id.")
        var deviceId: String

        @OptionGroup var app: AppSelection
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var config: ConfigFileOption

        func run() async throws {
            let device = try await self.database.withApp(self.app, try self.config.settings()) { client, app in
                try await DeviceTokens.read(appID: app.id, deviceID: self.deviceId, client: client, logger: .disabled)
            }
            guard let device else { throw ValidationError("no push-to-start token of device \(self.deviceId)") }
            for token in device.tokens {
                let state = token.isLive ? "live" : "invalidated \(token.invalidationReason ?? "")"
                print("\(token.attributesType)\t\(token.token)\t\(state)\tregistered \(RecordText.time(token.registeredAt))")
            }
        }
    }
}

extension RegistrationImporter.Kind: ExpressibleByArgument {}

extension ImportText.Format {
    /// A file's format: by its extension (`.ndjson` and `.jsonl`, `.json`), else a JSON array when its first
    /// character that is not white space is `[`.
    init(fileName: String, contents: [UInt8]) {
        switch URL(fileURLWithPath: fileName).pathExtension.lowercased() {
        case "ndjson", "jsonl": self = .ndjson
        case "json": self = .jsonArray
        default:
            let first = contents.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
            self = first == UInt8(ascii: "[") ? .jsonArray : .ndjson
        }
    }
}
