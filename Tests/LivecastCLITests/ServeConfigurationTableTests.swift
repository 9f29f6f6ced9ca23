import Foundation
import LivecastCore
import LivecastServer
import LivecastSettings
import LivecastTesting
import Testing

@testable import livecast

/// The README's configuration table is the code's: one row per setting `livecast serve` reads, with its flag, its
/// environment variable and its default as the code has them.
@Suite struct ServeConfigurationTableTests {
    private struct Row: Equatable {
        var key: String
        var flag: String
        var environment: String
        var defaultValue: String
    }

    @Test func theReadmeTableListsEverySettingWithItsFlagVariableAndDefault() throws {
        let ledger = SettingsLedger()
        let config = try LivecastConfig(configFile: nil, environment: ["DATABASE_URL": "postgres://u@h/db?sslmode=disable"])
        let migrations = Fixtures.repositoryRoot.appendingPathComponent("sql").path
        _ = try config.read(flags: ["migrations": migrations], ledger: ledger) { try LivecastApplication.Settings(reader: $0) }
        let rows = try self.readmeRows()
        #expect(Set(rows.map(\.key)) == Set(ledger.settings.map(\.key)), "README rows against the settings serve reads")
        for entry in ledger.settings {
            guard let row = rows.first(where: { $0.key == entry.key }) else { continue }
            #expect(row.flag == "--\(entry.key)", "\(entry.key)")
            #expect(row.environment == LivecastConfig.environmentVariable(of: entry.key), "\(entry.key)")
            switch entry.key {
            case "database-url", "migrations":
                continue  // given here: required, and found in ./sql
            default:
                #expect(Self.sameDefault(row.defaultValue, entry.value), "\(entry.key): README \(row.defaultValue), code \(entry.value ?? "none")")
            }
        }
    }

    /// The rows between the table's markers.
    private func readmeRows() throws -> [Row] {
        let readme = try String(contentsOf: Fixtures.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex { $0.hasPrefix("<!-- configuration:") })
        let end = try #require(lines.firstIndex { $0.hasPrefix("<!-- end of configuration") })
        return lines[(start + 1)..<end].compactMap { line in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count >= 5, cells[0] != "config key", !cells[0].hasPrefix("---") else { return nil }
            let code = { (cell: String) in cell.trimmingCharacters(in: CharacterSet(charactersIn: "`")) }
            return Row(key: code(cells[0]), flag: code(cells[1]), environment: code(cells[2]), defaultValue: cells[3])
        }
    }

    /// Whether the README's default says the code's: the same value in backticks, or words (no value) for none.
    private static func sameDefault(_ readme: String, _ code: String?) -> Bool {
        guard let code else { return !readme.hasPrefix("`") }
        let value = readme.trimmingCharacters(in: CharacterSet(charactersIn: "`"))
        if let readmeNumber = Double(value), let codeNumber = Double(code) { return readmeNumber == codeNumber }
        return value == code
    }
}
