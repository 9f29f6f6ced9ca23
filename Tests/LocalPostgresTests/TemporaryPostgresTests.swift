import Foundation
import LocalPostgres
import Logging
import PostgresNIO
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PostgreSQL starts, answers queries with the settings asked for, and leaves nothing behind.
@Suite struct TemporaryPostgresTests {
    @Test func startsAnswersAndLeavesNoDirectoryNorProcess() async throws {
        let postgres = try await TemporaryPostgres.start(settings: ["max_connections": "42"])
        #expect(FileManager.default.fileExists(atPath: postgres.directory.appendingPathComponent("data/PG_VERSION").path))
        #expect(postgres.configuration.host == "127.0.0.1" && postgres.configuration.port == postgres.port)

        let client = PostgresClient(
            configuration: postgres.configuration,
            backgroundLogger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        let (version, maxConnections) = try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            var answer = ("", "")
            for try await row in try await client.query("SELECT current_setting('server_version_num'), current_setting('max_connections')").decode(
                (String, String).self
            ) {
                answer = row
            }
            return answer
        }
        #expect(version.hasPrefix(postgres.version), "server_version_num \(version), PG_VERSION \(postgres.version)")
        #expect(maxConnections == "42")

        let processID = postgres.processID
        await postgres.stop()
        #expect(!FileManager.default.fileExists(atPath: postgres.directory.path), "the directory was not removed")
        #expect(kill(processID, 0) == -1 && errno == ESRCH, "the server still runs")
    }
}
