package import Configuration
import Foundation
import LivecastCore
import PostgresNIO

extension PostgresClient.Configuration {
    /// The PostgreSQL server that settings name.
    ///
    /// - Configuration keys:
    ///   - `database-url` (string, required, secret): `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`, with
    ///     `sslmode` (default `require`) and `sslrootcert` query items.
    ///   - `database-ca-file` (path, optional): the CAs that sign the server's certificate, for `sslmode=verify-ca`
    ///     or `verify-full`; the URL's `sslrootcert` when absent.
    /// - Throws: ``InvalidSetting`` when the URL is missing or cannot be used.
    package init(reader: ConfigReader) throws {
        guard let url = reader.text("database-url", isSecret: true) else {
            throw InvalidSetting(key: "database-url", value: nil, allowed: "is required (a postgres:// URL)")
        }
        do {
            try self.init(url: url, caFile: reader.text("database-ca-file"))
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
    /// - Throws: ``InvalidSetting`` when the file is unreadable or holds no key.
    package init?(reader: ConfigReader) throws {
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
