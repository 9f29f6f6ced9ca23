import Foundation
import LivecastTesting
import PostgresNIO
import Testing

/// `livecast migrate` against a real PostgreSQL.
@Suite struct MigrateCommandTests {
    private var livecast: String {
        Fixtures.productsDirectory.appendingPathComponent("livecast").path
    }

    @Test func appliesThenReportsUpToDate() async throws {
        let database = try await TestPostgres.shared.makeDatabase(named: "cli_migrate")
        let url = CLIDatabase.url(of: database)
        let sql = CLIDatabase.migrations
        let first = try await ExternalProcess.run(self.livecast, ["migrate", "--database-url", url, "--migrations", sql])
        #expect(first.status == 0, "\(first.stderr)")
        // Every file of sql/, in order.
        let files = try FileManager.default.contentsOfDirectory(atPath: sql).filter { $0.hasSuffix(".sql") }.sorted()
        #expect(files.count >= 8 && files.first == "0001_initial.sql")
        #expect(first.stdout == files.map { "applied \($0)\n" }.joined())
        let second = try await ExternalProcess.run(self.livecast, ["migrate", "--database-url", url, "--migrations", sql])
        #expect(second.status == 0)
        #expect(second.stdout == "up to date\n")
    }

    @Test func badURLsAndMissingDirectoriesFailClearly() async throws {
        let cases: [([String], String)] = [
            (["--database-url", "mysql://x@y/z"], "expected postgres://"),
            (["--database-url", "postgres://x@y/"], "names no database"),
            (["--database-url", "postgres://x@y/z", "--migrations", "/no/such/dir"], "cannot read the migrations directory"),
        ]
        for (arguments, message) in cases {
            let result = try await ExternalProcess.run(self.livecast, ["migrate"] + arguments)
            #expect(result.status != 0)
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
    }
}
