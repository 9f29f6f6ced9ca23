import Foundation
import PostgresNIO

extension PostgresClient.Configuration {
    /// Reads a connection URL: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]`.
    ///
    /// TLS defaults to `prefer`. Percent-encoded user names and passwords are decoded.
    /// - Throws: ``DatabaseURLError`` naming what is missing.
    public init(url text: String) throws(DatabaseURLError) {
        guard let url = URLComponents(string: text), ["postgres", "postgresql"].contains(url.scheme ?? "") else {
            throw DatabaseURLError(message: "expected postgres://USER@HOST:PORT/DATABASE")
        }
        guard let host = url.host, !host.isEmpty else { throw DatabaseURLError(message: "the database URL has no host") }
        guard let user = url.user, !user.isEmpty else { throw DatabaseURLError(message: "the database URL has no user") }
        let database = String(url.path.drop { $0 == "/" })
        guard !database.isEmpty else { throw DatabaseURLError(message: "the database URL names no database") }
        let tls: TLS
        switch url.queryItems?.first(where: { $0.name == "sslmode" })?.value ?? "prefer" {
        case "disable": tls = .disable
        case "prefer", "allow": tls = .prefer(.makeClientConfiguration())
        case "require", "verify-ca", "verify-full": tls = .require(.makeClientConfiguration())
        case let mode: throw DatabaseURLError(message: "unsupported sslmode \(mode)")
        }
        self.init(
            host: host,
            port: url.port ?? 5432,
            username: user.removingPercentEncoding ?? user,
            password: url.password.map { $0.removingPercentEncoding ?? $0 },
            database: database,
            tls: tls
        )
    }
}

/// A database URL that cannot be used. Its message never repeats the password.
public struct DatabaseURLError: Error, CustomStringConvertible {
    /// What is wrong.
    public let message: String
    public var description: String { self.message }
}
