package import Configuration
import Foundation
import LivecastCore
import LivecastSettings
import PostgresNIO

extension PostgresClient.Configuration {
    /// The PostgreSQL server that settings name.
    ///
    /// - Configuration keys:
    ///   - `database-url` (string, required, secret): `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`, with
    ///     `sslmode` (default `verify-full`) and `sslrootcert` query items. What its TLS verifies is remarked in the
    ///     task's ``SettingsLedger`` (`--print-config`).
    ///   - `database-ca-file` (path, optional): the CAs that sign the server's certificate, for `sslmode=verify-ca`
    ///     or `verify-full`; the URL's `sslrootcert` when absent.
    ///   - `database-password-file` (path, optional): a file holding the password (one trailing newline ignored),
    ///     so that it need be neither in the URL nor on a command line; not with a password in the URL.
    /// - Throws: ``InvalidSetting`` when the URL is missing or cannot be used, or the password file is unusable.
    package init(reader: ConfigReader) throws {
        let tls = try DatabaseTLS(reader: reader)
        let url = reader.text("database-url", isSecret: true) ?? ""
        do {
            try self.init(url: url, caFile: tls.caFile)
        } catch {
            // The URL may hold a password: only the reason is kept.
            throw InvalidSetting(key: "database-url", value: nil, allowed: "cannot be used: \(error.message)")
        }
        SettingsLedger.current?.remark("database-url", tls.summary)
        if let path = reader.text("database-password-file") {
            guard self.password == nil else {
                throw InvalidSetting(
                    key: "database-password-file",
                    value: path,
                    allowed: "cannot be used with a password in database-url: give the password in one place"
                )
            }
            self.password = try Self.readPassword(file: path)
        }
    }

    /// The password a file holds: its text without one trailing line break.
    private static func readPassword(file path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path), var text = String(data: data, encoding: .utf8) else {
            throw InvalidSetting(key: "database-password-file", value: path, allowed: "cannot be read")
        }
        if let last = text.last, last.isNewline { text.removeLast() }
        guard !text.isEmpty else {
            throw InvalidSetting(key: "database-password-file", value: path, allowed: "holds no password")
        }
        return text
    }
}

extension DatabaseTLS {
    /// How the database URL that settings name uses TLS.
    ///
    /// - Configuration keys: `database-url` and `database-ca-file`, as `PostgresClient.Configuration(reader:)` reads
    ///   them.
    /// - Throws: ``InvalidSetting`` when the URL is missing or its `sslmode` unknown.
    package init(reader: ConfigReader) throws {
        guard let text = reader.text("database-url", isSecret: true) else {
            throw InvalidSetting(key: "database-url", value: nil, allowed: "is required (a postgres:// URL)")
        }
        let caFile = reader.text("database-ca-file")
        guard let url = URLComponents(string: text) else {
            throw InvalidSetting(key: "database-url", value: nil, allowed: "cannot be used: expected postgres://USER@HOST:PORT/DATABASE")
        }
        do {
            try self.init(url: url, caFile: caFile)
        } catch {
            // The URL may hold a password: only the reason is kept.
            throw InvalidSetting(key: "database-url", value: nil, allowed: "cannot be used: \(error.message)")
        }
    }
}

extension MasterKey {
    /// The master key that settings name, if any.
    ///
    /// - Configuration keys:
    ///   - `master-key-file` (path, optional, secret): the file holding the base64 key that seals apps' signing keys.
    ///   - `master-key` (never read): the key itself, in the environment (`LIVECAST_MASTER_KEY`) or a config file, is
    ///     refused rather than ignored: an environment is inherited by child processes and shown to debuggers.
    /// - Throws: ``InvalidSetting`` when the file is unreadable or holds no key, or the key itself is given.
    package init?(reader: ConfigReader) throws {
        // Read without noting it in the ledger: it is not a setting, only a mistake to name.
        if reader.string(forKey: ConfigKey(["master-key"]), isSecret: true) != nil {
            throw InvalidSetting(
                key: "master-key",
                value: nil,
                allowed: "is not read: write the base64 key to a file only Livecast can read and name it with --master-key-file"
            )
        }
        guard let path = reader.text("master-key-file", isSecret: true) else { return nil }
        do {
            try self.init(file: path)
        } catch {
            throw InvalidSetting(key: "master-key-file", value: nil, allowed: "cannot be used: \(error.message)")
        }
    }
}

extension Migration {
    /// Where the migrations are looked for when settings name no directory.
    package static let defaultDirectories = ["sql", "/usr/share/livecast/sql"]

    /// The migrations of the directory that settings name.
    ///
    /// - Configuration keys:
    ///   - `migrations` (path, optional): the directory of the numbered SQL files; else `./sql`, else
    ///     `/usr/share/livecast/sql`.
    /// - Throws: ``InvalidSetting`` when there is no such directory or a file is unusable.
    package static func load(reader: ConfigReader) throws -> [Migration] {
        let found = Self.defaultDirectories.first { FileManager.default.fileExists(atPath: $0) }
        let directory = reader.text("migrations", default: found)
        guard let directory else {
            throw InvalidSetting(key: "migrations", value: nil, allowed: "is required (no ./sql or /usr/share/livecast/sql here)")
        }
        do {
            return try Self.load(from: directory)
        } catch {
            throw InvalidSetting(key: "migrations", value: directory, allowed: "cannot be used: \(error.message)")
        }
    }
}
