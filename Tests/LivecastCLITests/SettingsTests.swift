import ArgumentParser
import Foundation
import LivecastTesting
import Testing

@testable import livecast

/// Where a setting comes from (flag, then environment variable, then `--config` file) and what the two file formats
/// accept: the rules the README's configuration table states.
@Suite struct SettingsTests {
    private func settings(file text: String?, environment: [String: String] = [:]) throws -> Settings {
        let directory = try TemporaryDirectory()
        guard let text else { return try Settings(configFile: nil, environment: environment) }
        let path = directory.path("livecast.conf")
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        return try Settings(configFile: path, environment: environment)
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

    @Test func aFlagWinsOverItsEnvironmentVariableWhichWinsOverTheFile() throws {
        let settings = try self.settings(file: "listen = file:1\nrate-limit = 7\n", environment: ["LIVECAST_LISTEN": "env:2"])
        #expect(settings.value("flag:3", env: "LIVECAST_LISTEN", key: "listen") == "flag:3")
        #expect(settings.value(nil, env: "LIVECAST_LISTEN", key: "listen") == "env:2")
        #expect(settings.value(nil, env: "LIVECAST_RATE_LIMIT", key: "rate-limit") == "7")
        #expect(settings.value(nil, env: "LIVECAST_RATE_BURST", key: "rate-burst") == nil)
        #expect(try settings.positiveNumber(nil, env: "LIVECAST_RATE_BURST", key: "rate-burst", default: 100) == 100)
        #expect(try self.settings(file: nil).value(nil, env: "DATABASE_URL", key: "database-url") == nil)
    }

    @Test func keyValueLinesTakeCommentsBlankLinesAndSpaces() throws {
        let settings = try self.settings(file: "# Livecast\n\n  database-url =  postgres://u@h/db?sslmode=disable \ndispatch-workers=0\n")
        #expect(settings.value(nil, env: "DATABASE_URL", key: "database-url") == "postgres://u@h/db?sslmode=disable")
        #expect(try settings.integer(nil, env: "LIVECAST_DISPATCH_WORKERS", key: "dispatch-workers", minimum: 0, default: 4) == 0)
    }

    @Test func aJSONObjectTakesStringsAndNumbers() throws {
        let settings = try self.settings(file: #"  {"listen": "0.0.0.0:8080", "rate-limit": 12.5, "reap-interval": 30, "stale-grace": "60"}"#)
        #expect(settings.value(nil, env: "LIVECAST_LISTEN", key: "listen") == "0.0.0.0:8080")
        #expect(try settings.positiveNumber(nil, env: "LIVECAST_RATE_LIMIT", key: "rate-limit", default: 50) == 12.5)
        #expect(try settings.integer(nil, env: "LIVECAST_REAP_INTERVAL", key: "reap-interval", minimum: 0, default: 60) == 30)
        #expect(try settings.integer(nil, env: "LIVECAST_STALE_GRACE", key: "stale-grace", minimum: 0, default: 900) == 60)
    }

    @Test func badFilesAndValuesAreRefusedNamingTheFlag() throws {
        let directory = try TemporaryDirectory()
        let missing = directory.path("none.conf")
        #expect(self.refusal { try Settings(configFile: missing, environment: [:]) } == "--config: cannot read \(missing)")
        #expect(self.refusal { try self.settings(file: "listen = a:1\nnot a setting\n") }?.hasPrefix("--config: line 2 of ") == true)
        #expect(self.refusal { try self.settings(file: #"{"listen": "a:1""#) }?.hasSuffix(" is not a JSON object") == true)
        #expect(self.refusal { try self.settings(file: #"{"listen": {"host": "a"}}"#) }?.hasPrefix("--config: listen in ") == true)

        let settings = try self.settings(file: "reap-interval = -1\nrate-limit = 0\n", environment: ["LIVECAST_TOKEN_EXPIRY_DAYS": "soon"])
        #expect(
            self.refusal { try settings.integer(nil, env: "LIVECAST_REAP_INTERVAL", key: "reap-interval", minimum: 0, default: 60) }
                == "--reap-interval must be a whole number, 0 or more"
        )
        #expect(
            self.refusal { try settings.integer(nil, env: "LIVECAST_TOKEN_EXPIRY_DAYS", key: "token-expiry-days", minimum: 1, default: 30) }
                == "--token-expiry-days must be a whole number, 1 or more"
        )
        #expect(
            self.refusal { try settings.positiveNumber(nil, env: "LIVECAST_RATE_LIMIT", key: "rate-limit", default: 50) }
                == "--rate-limit must be a positive number"
        )
    }
}
