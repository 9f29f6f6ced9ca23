import Hummingbird
import LivecastStore
import Logging
package import PostgresNIO

/// Bulk imports of push-to-start tokens or activities, for backends moving to Livecast: the HTTP routes
/// (`POST …/push-to-start-tokens:import`, `…/activities:import`) and `livecast tokens import` both run them.
///
/// Each row is checked on its own as the single registration (`PUT …/push-to-start-tokens/{deviceId}/{attributesType}`,
/// `PUT …/activities/{activityId}`) checks its path and body, then the valid rows are registered with the outcome
/// of registering them in order, one by one: a later row for the same device and type (or activity) wins. A row is
/// written entirely or not at all, and a refused row never stops the others.
///
/// ```swift
/// let text = try ImportText(Array(fileContents), format: .ndjson)
/// let report = try await RegistrationImporter(database: client, logger: logger).run(.pushToStart, appID: app.id, text: text)
/// ```
package struct RegistrationImporter: Sendable {
    /// What the rows register.
    package enum Kind: String, Sendable, CaseIterable {
        /// Push-to-start tokens: rows of `deviceId`, `attributesType`, `token`, and optionally `userId`,
        /// `osVersion`, `frequentUpdatesEnabled`.
        case pushToStart = "push-to-start"
        /// Activities: rows of `activityId`, `attributesType`, and optionally `feed`, `pushToken`, `channelId`,
        /// `deviceId`, `userId`, `osVersion`.
        case activities
    }

    /// The most rows one HTTP request may carry: 10,000.
    package static let maximumRowsPerRequest = 10_000
    /// The largest HTTP request body of an import: 16 MiB, room for 10,000 rows of the longest identifiers.
    package static let maximumRequestBytes = 16 * 1024 * 1024

    private let database: PostgresClient
    private var logger: Logger

    /// - Parameters:
    ///   - database: The running PostgreSQL client.
    ///   - logger: The store's logger.
    package init(database: PostgresClient, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    /// The same importer logging to `logger`: a route passes its request's.
    func logging(to logger: Logger) -> Self {
        var importer = self
        importer.logger = logger
        return importer
    }

    /// Imports every row of `text`, a batch of ``LivecastStore/RegistrationImport/chunkSize`` rows at a time.
    /// - Parameters:
    ///   - kind: What the rows register.
    ///   - appID: The app they belong to.
    ///   - text: The rows.
    ///   - progress: Called after each batch with the number of rows done so far.
    /// - Returns: Each row's result or error, and the counts.
    /// - Throws: ``APIError`` `400 malformed_request`, before anything is imported, for a JSON array with a row that is
    ///   not JSON; otherwise only what stops the whole import (the database going away), and rows imported before
    ///   stay imported: a connection lost after the first batch is ``APIError/importInterrupted(after:of:)``, which
    ///   says how far it got.
    package func run(_ kind: Kind, appID: Int64, text: ImportText, progress: (_ rowsDone: Int) -> Void = { _ in }) async throws -> ImportReport {
        switch kind {
        case .pushToStart: try await self.run(PushToStartTokenImportRow.self, appID: appID, text: text, progress: progress)
        case .activities: try await self.run(ActivityImportRow.self, appID: appID, text: text, progress: progress)
        }
    }

    private func run<Row: ImportRow>(_: Row.Type, appID: Int64, text: ImportText, progress: (Int) -> Void) async throws -> ImportReport {
        var report = ImportReport(results: Row.Result.allCases.map(\.rawValue))
        // Every row is decoded before any is imported: a JSON array with a row that is not JSON is refused whole.
        let decoded = try text.decodeRows(as: Row.self)
        for start in stride(from: 0, to: text.count, by: RegistrationImport.chunkSize) {
            let batch = start..<min(start + RegistrationImport.chunkSize, text.count)
            let valid = decoded[batch].compactMap { try? $0.get() }
            // One outcome per valid row, in their order.
            let registered: [ImportOutcome<Row.Result>]
            do {
                registered = try await Row.register(valid, appID: appID, database: self.database, logger: self.logger)
            } catch  where start > 0 && StoreError.isConnectionLoss(error) {
                throw APIError.importInterrupted(after: start, of: text.count)
            }
            var outcomes = registered.makeIterator()
            for (index, row) in zip(batch, decoded[batch]) {
                switch row {
                case .failure(let error): report.add(index, error: error)
                case .success:
                    switch outcomes.next()! {
                    case .registered(let result): report.add(index, result: result.rawValue)
                    case .refused(let error): report.add(index, error: APIError(error))
                    }
                }
            }
            progress(batch.upperBound)
        }
        return report
    }
}
