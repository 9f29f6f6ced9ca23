import Foundation
import LivecastTesting
import PostgresNIO
import Testing

/// `livecast tokens import` against a real PostgreSQL: per-row failures on stdout, progress on stderr, the exit status.
@Suite struct TokensImportCommandTests {
    private var livecast: String {
        Fixtures.productsDirectory.appendingPathComponent("livecast").path
    }

    @Test func aFileIsImportedRowByRowAndARefusedRowFailsTheCommand() async throws {
        let (database, url) = try await CLIDatabase.migrated(named: "cli_tokens_import")
        try await TestPostgres.withClient(database) { client in
            _ = try await client.query(CLIDatabase.insertGameApp)
        }
        let directory = try TemporaryDirectory()
        let tokens = directory.path("tokens.ndjson")
        try """
        {"deviceId": "d1", "attributesType": "GameAttributes", "token": "aa01"}
        {"deviceId": "d2", "attributesType": "GameAttributes", "token": "not hex"}
        {"deviceId": "d3", "attributesType": "GameAttributes", "token": "aa03"}
        """.write(toFile: tokens, atomically: true, encoding: .utf8)
        let failed = try await ExternalProcess.run(
            self.livecast,
            ["tokens", "import", tokens, "--bundle-id", "com.example.game", "--database-url", url]
        )
        #expect(failed.status == 1)
        let lines = failed.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "row 1: 422 invalid (token) token must be hex: an even number of 2 to 200 digits")
        #expect(lines.last?.hasPrefix("imported 3 rows into com.example.game (sandbox) in ") == true)
        #expect(lines.last?.hasSuffix("rows/s): 2 created, 1 failed, 0 moved, 0 rotated, 0 unchanged") == true, "\(failed.stdout)")
        #expect(failed.stderr.hasPrefix("3/3 rows, "), "one plain line per batch when stderr is not a terminal: \(failed.stderr)")

        let again = try await ExternalProcess.run(
            self.livecast,
            ["tokens", "import", tokens, "--bundle-id", "com.example.game", "--database-url", url]
        )
        #expect(again.stdout.hasSuffix("0 created, 1 failed, 0 moved, 0 rotated, 2 unchanged\n"))

        let activities = directory.path("activities.txt")
        try #"  [{"activityId": "act-1", "attributesType": "GameAttributes", "pushToken": "bb01"}]"#.write(
            toFile: activities,
            atomically: true,
            encoding: .utf8
        )
        let imported = try await ExternalProcess.run(
            self.livecast,
            ["tokens", "import", activities, "--kind", "activities", "--bundle-id", "com.example.game", "--database-url", url]
        )
        #expect(imported.status == 0, "\(imported.stdout)\(imported.stderr)")
        #expect(imported.stdout.hasSuffix("1 created, 0 failed, 0 tokenAdded, 0 tokenRotated, 0 unchanged\n"))

        let counts = try await TestPostgres.withClient(database) { client in
            let rows = try await client.query(
                "SELECT (SELECT count(*) FROM push_to_start_tokens)::int, (SELECT count(*) FROM activity_tokens WHERE token = 'bb01')::int"
            )
            for try await counts in rows.decode((Int, Int).self) { return counts }
            return (-1, -1)
        }
        #expect(counts == (2, 1))

        let broken = directory.path("broken.json")
        try "[{".write(toFile: broken, atomically: true, encoding: .utf8)
        let refused = try await ExternalProcess.run(
            self.livecast,
            ["tokens", "import", broken, "--bundle-id", "com.example.game", "--database-url", url]
        )
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("broken.json: the body must be one JSON array of rows"))

        // Brackets and commas in place, but a row that is not JSON: refused before the good row is imported.
        let badRow = directory.path("bad-row.json")
        try #"[{"deviceId": "d9", "attributesType": "GameAttributes", "token": "aa09"}, tru]"#.write(
            toFile: badRow,
            atomically: true,
            encoding: .utf8
        )
        let refusedRow = try await ExternalProcess.run(
            self.livecast,
            ["tokens", "import", badRow, "--bundle-id", "com.example.game", "--database-url", url]
        )
        #expect(refusedRow.status != 0)
        #expect(refusedRow.stderr.contains("bad-row.json: the body must be one JSON array of rows"), "\(refusedRow.stderr)")
        let d9 = try await TestPostgres.withClient(database) { client in
            let rows = try await client.query("SELECT count(*)::int FROM push_to_start_tokens WHERE device_id = 'd9'")
            for try await count in rows.decode(Int.self) { return count }
            return -1
        }
        #expect(d9 == 0)
    }

    /// The database goes away during the second batch (a trigger terminates the connection that inserts one of its
    /// rows): the command fails with the error that says how far it got, not with a usage error about the file.
    @Test func anImportCutOffByTheDatabaseSaysHowFarItGot() async throws {
        let (database, url) = try await CLIDatabase.migrated(named: "cli_tokens_import_cut_off")
        try await TestPostgres.withClient(database) { client in
            try await client.query(CLIDatabase.insertGameApp)
            try await client.cutOffConnections(
                named: "cut_off_import",
                "BEFORE INSERT ON push_to_start_tokens",
                when: "NEW.device_id = 'device-5500'"
            )
        }
        let directory = try TemporaryDirectory()
        let tokens = directory.path("tokens.ndjson")
        try (0..<6_000).map { #"{"deviceId": "device-\#($0)", "attributesType": "GameAttributes", "token": "\#(String(format: "%08x", $0))"}"# }
            .joined(separator: "\n")
            .write(toFile: tokens, atomically: true, encoding: .utf8)
        let cutOff = try await ExternalProcess.run(
            self.livecast,
            ["tokens", "import", tokens, "--bundle-id", "com.example.game", "--database-url", url]
        )
        #expect(cutOff.status == 1, "\(cutOff.stderr)")
        #expect(cutOff.stderr.contains("503 database_unavailable: the database went away after the first 5000 of 6000 rows"), "\(cutOff.stderr)")
        #expect(!cutOff.stderr.contains("Usage:"), "\(cutOff.stderr)")
    }
}
