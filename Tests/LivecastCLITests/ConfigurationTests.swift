import ArgumentParser
import Foundation
import LivecastCore
import LivecastServer
import LivecastService
import LivecastSettings
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

@testable import livecast

/// Where a setting comes from (flag, then environment variable, then `--config` file, then its default), what the
/// two file formats accept, and how a bad value is refused: by the key, its source and what is allowed.
@Suite struct ConfigurationTests {
    private func config(file text: String?, environment: [String: String] = [:]) throws -> LivecastConfig {
        guard let text else { return try LivecastConfig(configFile: nil, environment: environment) }
        let directory = try TemporaryDirectory()
        let path = directory.path("livecast.conf")
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        return try LivecastConfig(configFile: path, environment: environment)
    }

    /// The message of the `ValidationError` that `body` throws.
    private func refusal(_ body: () throws -> Any) -> String? {
        do {
            _ = try body()
            return nil
        } catch let error as ValidationError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func aFlagWinsOverItsEnvironmentVariableWhichWinsOverTheFileWhichWinsOverTheDefault() throws {
        let config = try self.config(
            file: "rate-limit = 7\nrate-burst = 8\nfailed-auth-rate = 9\n",
            environment: ["LIVECAST_RATE_LIMIT": "5", "LIVECAST_RATE_BURST": "6", "HOME": "/root"]
        )
        let flags: [String: String?] = ["rate-limit": "3", "rate-burst": nil]
        let api = try config.read(flags: flags) { try LivecastAPI.Configuration(reader: $0) }
        #expect(api.rateLimit.ratePerSecond == 3, "the flag")
        #expect(api.rateLimit.burst == 6, "the environment")
        #expect(api.failedAuthenticationLimit.ratePerSecond == 9, "the file")
        #expect(api.failedAuthenticationLimit.burst == 20, "the default")
        #expect(config.source(of: "rate-limit", flags: flags) == "--rate-limit")
        #expect(config.source(of: "rate-burst", flags: flags) == "LIVECAST_RATE_BURST")
        #expect(config.source(of: "failed-auth-rate", flags: flags).hasPrefix("failed-auth-rate in "))
        #expect(config.source(of: "failed-auth-burst", flags: flags) == "default")
    }

    @Test func everySettingOfServeIsReadFromEachSource() throws {
        // Each key of serve, given its default's text through each source in turn, is read back from it.
        let defaults = try self.serveSettings(flags: [:], environment: ["DATABASE_URL": "postgres://u@h/db?sslmode=disable"])
        for entry in defaults.settings {
            guard let value = entry.value, entry.value != "<secret>" else { continue }
            let name = LivecastConfig.environmentVariable(of: entry.key)
            let fromEnvironment = try self.config(file: nil, environment: ["DATABASE_URL": "postgres://u@h/db?sslmode=disable", name: value])
            #expect(fromEnvironment.source(of: entry.key, flags: [:]) == name, "\(entry.key)")
            let fromFile = try self.config(file: "database-url = postgres://u@h/db?sslmode=disable\n\(entry.key) = \(value)\n")
            #expect(fromFile.source(of: entry.key, flags: [:]).hasPrefix("\(entry.key) in "), "\(entry.key)")
            let ledger = SettingsLedger()
            let migrations = Fixtures.repositoryRoot.appendingPathComponent("sql").path
            var flags: [String: String?] = ["migrations": migrations]
            flags[entry.key] = value
            _ = try fromFile.read(flags: flags, ledger: ledger) { try LivecastApplication.Settings(reader: $0) }
            #expect(ledger.settings.first { $0.key == entry.key }?.value == value, "\(entry.key)")
        }
        #expect(defaults.settings.count >= 25, "\(defaults.settings.map(\.key))")
    }

    @Test func valuesReachTheTypesThatUseThem() throws {
        let config = try self.config(
            file: #"{"database-url": "postgres://u@h/db?sslmode=disable", "listen": "0.0.0.0:8081", "reap-interval": 30, "stale-grace": "60"}"#,
            environment: ["LIVECAST_TOKEN_EXPIRY_DAYS": "2", "LIVECAST_STATEMENT_TIMEOUT": "0", "LIVECAST_RETRY_DEADLINE": "120"]
        )
        let settings = try config.read(flags: ["metrics-listen": "[::1]:0", "migrations": Fixtures.repositoryRoot.appendingPathComponent("sql").path])
        {
            try LivecastApplication.Settings(reader: $0)
        }
        #expect(settings.host == "0.0.0.0" && settings.port == 8081)
        #expect(settings.metricsHost == "::1" && settings.metricsPort == 0)
        #expect(settings.reapInterval == .seconds(30))
        #expect(settings.reaperPolicy.staleGrace == .seconds(60))
        #expect(settings.reaperPolicy.tokenExpiry == .days(2))
        #expect(settings.statementTimeout == nil, "0 sets none")
        #expect(settings.dispatch.retryDeadline == .seconds(120))
        #expect(settings.api.retryDeadline == .seconds(120))
        #expect(!settings.migrations.isEmpty)
    }

    @Test func keyValueLinesTakeCommentsBlankLinesAndSpaces() throws {
        let config = try self.config(file: "# Livecast\n\n  database-url =  postgres://u@h/db?sslmode=disable \ndispatch-workers=0\n")
        let ledger = SettingsLedger()
        _ = try config.read(flags: [:], ledger: ledger) { try LivecastApplication.Settings(reader: $0) }
        #expect(ledger.settings.first { $0.key == "dispatch-workers" }?.value == "0")
        #expect(ledger.settings.first { $0.key == "database-url" }?.value == "<secret>", "the URL is a secret")
    }

    @Test func badFilesAndValuesAreRefusedNamingTheKeyTheSourceAndWhatIsAllowed() throws {
        let directory = try TemporaryDirectory()
        let missing = directory.path("none.conf")
        #expect(self.refusal { try LivecastConfig(configFile: missing, environment: [:]) } == "--config: cannot read \(missing)")
        #expect(self.refusal { try self.config(file: "listen = a:1\nnot a setting\n") }?.hasPrefix("--config: line 2 of ") == true)
        #expect(self.refusal { try self.config(file: #"{"listen": "a:1""#) }?.hasSuffix(" is not a JSON object") == true)
        #expect(self.refusal { try self.config(file: #"{"listen": {"host": "a"}}"#) }?.hasPrefix("--config: listen in ") == true)

        let config = try self.config(file: "reap-interval = -1\nrate-limit = 0\n", environment: ["LIVECAST_TOKEN_EXPIRY_DAYS": "soon"])
        #expect(
            self.refusal { try config.read(flags: [:]) { try ReaperPolicy(reader: $0) } }
                == "--token-expiry-days must be a whole number, 1 or more (soon from LIVECAST_TOKEN_EXPIRY_DAYS)"
        )
        let rate = self.refusal { try config.read(flags: [:]) { try LivecastAPI.Configuration(reader: $0) } }
        #expect(rate?.hasPrefix("--rate-limit must be a positive number (0 from rate-limit in ") == true, "\(rate ?? "")")
        #expect(
            self.refusal { try config.read(flags: ["rate-limit": "-2"]) { try LivecastAPI.Configuration(reader: $0) } }
                == "--rate-limit must be a positive number (-2 from --rate-limit)"
        )
        #expect(
            self.refusal { try self.config(file: nil).read(flags: [:]) { try PostgresClient.Configuration(reader: $0) } }
                == "--database-url is required (a postgres:// URL): give --database-url or set DATABASE_URL (or database-url in the --config file)"
        )
        let secret = self.refusal {
            try self.config(file: nil, environment: ["DATABASE_URL": "mysql://user:hunter2@h/db"]).read(flags: [:]) {
                try PostgresClient.Configuration(reader: $0)
            }
        }
        #expect(secret?.hasPrefix("--database-url cannot be used: ") == true && secret?.contains("hunter2") == false, "\(secret ?? "")")
        let fromFile = self.refusal {
            try self.config(file: "database-url = mysql://user:hunter2@h/db\n").read(flags: [:]) { try PostgresClient.Configuration(reader: $0) }
        }
        #expect(fromFile?.hasPrefix("--database-url cannot be used: ") == true, "\(fromFile ?? "")")
        #expect(fromFile?.contains("(from database-url in ") == true && fromFile?.contains("hunter2") == false, "\(fromFile ?? "")")
    }

    /// The settings `livecast serve` reads, with their effective values.
    private func serveSettings(flags: [String: String?], environment: [String: String]) throws -> SettingsLedger {
        let ledger = SettingsLedger()
        let migrations = Fixtures.repositoryRoot.appendingPathComponent("sql").path
        _ = try self.config(file: nil, environment: environment).read(flags: flags.merging(["migrations": migrations]) { $1 }, ledger: ledger) {
            try LivecastApplication.Settings(reader: $0)
        }
        return ledger
    }
}
