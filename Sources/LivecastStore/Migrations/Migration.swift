import Crypto
import Foundation

/// One numbered SQL file of `sql/`, such as `0001_initial.sql`.
package struct Migration: Sendable, Hashable {
    /// The number before the first underscore.
    package let version: Int
    /// The file name.
    package let name: String
    /// The SQL, applied as one transaction.
    package let sql: String
    /// SHA-256 of the file's bytes, in hex: an applied file must never change.
    package let checksum: String

    /// Creates a migration from a file's name and text.
    /// - Throws: ``MigrationError`` when the name is not `NNNN_description.sql`.
    package init(name: String, sql: String) throws(MigrationError) {
        guard name.hasSuffix(".sql"), let underscore = name.firstIndex(of: "_"), let version = Int(name[..<underscore]), version > 0 else {
            throw MigrationError(message: "\(name): migration files are named NNNN_description.sql")
        }
        self.version = version
        self.name = name
        self.sql = sql
        self.checksum = SHA256.hash(data: Data(sql.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Checksums of files as an earlier release shipped them, with the same statements: only a comment differed.
    /// A database that applied such a file then records that checksum, and is in the state the file makes now.
    private static let releasedEarlier: [String: Set<String>] = [
        // 054034b reworded a comment of the file 953f3d0 shipped; bc94f1f put 953f3d0's bytes back.
        "0031_supersede_retried_updates_keeps_its_plan.sql": ["b061f96300544d362b8e911503b5428dfed2f26e76d4fcfbfb7c29b22ee93336"]
    ]

    /// Whether a database that recorded `checksum` for this file applied this file: its checksum, or one of
    /// ``releasedEarlier``'s for it.
    package func isApplied(asRecorded checksum: String) -> Bool {
        checksum == self.checksum || Self.releasedEarlier[self.name]?.contains(checksum) == true
    }

    /// Reads every `*.sql` file of a directory, in version order.
    /// - Throws: ``MigrationError`` when the directory cannot be read, a name is malformed, or two files share a
    ///   version.
    package static func load(from directory: String) throws(MigrationError) -> [Migration] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".sql") }
        } catch {
            throw MigrationError(message: "cannot read the migrations directory \(directory)")
        }
        var migrations: [Migration] = []
        for name in names {
            guard let sql = try? String(contentsOfFile: "\(directory)/\(name)", encoding: .utf8) else {
                throw MigrationError(message: "cannot read \(directory)/\(name)")
            }
            migrations.append(try Migration(name: name, sql: sql))
        }
        migrations.sort { $0.version < $1.version }
        for (earlier, later) in zip(migrations, migrations.dropFirst()) where earlier.version == later.version {
            throw MigrationError(message: "\(earlier.name) and \(later.name) share version \(earlier.version)")
        }
        return migrations
    }
}

/// A migration that cannot be applied, and why.
package struct MigrationError: Error, Hashable, CustomStringConvertible {
    /// What is wrong.
    package let message: String
    package var description: String { self.message }
}
