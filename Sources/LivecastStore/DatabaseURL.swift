package import Foundation
package import PostgresNIO

extension PostgresClient.Configuration {
    /// Reads a connection URL: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=MODE][&sslrootcert=FILE]`.
    ///
    /// `sslmode` means what it means to libpq, and defaults to `require`:
    /// - `disable`: no TLS.
    /// - `allow`, `prefer`: TLS when the server offers it, else plain text (downgradable; not verified).
    /// - `require`: TLS always; the server's certificate is not verified (encryption only), unless a CA file is given,
    ///   which makes it `verify-ca` as in libpq.
    /// - `verify-ca`: TLS, and the server's certificate must chain to the CA file (else the system's trust roots).
    /// - `verify-full`: as `verify-ca`, and the certificate must also name the URL's host.
    ///
    /// Percent-encoded user names and passwords are decoded.
    /// - Parameters:
    ///   - text: The URL.
    ///   - caFile: A PEM file of the certificate authorities to trust; the URL's `sslrootcert` when `nil`.
    /// - Throws: ``DatabaseURLError`` naming what is missing.
    package init(url text: String, caFile: String? = nil) throws(DatabaseURLError) {
        guard let url = URLComponents(string: text), ["postgres", "postgresql"].contains(url.scheme ?? "") else {
            throw DatabaseURLError(message: "expected postgres://USER@HOST:PORT/DATABASE")
        }
        guard let host = url.host, !host.isEmpty else { throw DatabaseURLError(message: "the database URL has no host") }
        guard let user = url.user, !user.isEmpty else { throw DatabaseURLError(message: "the database URL has no user") }
        let database = String(url.path.drop { $0 == "/" })
        guard !database.isEmpty else { throw DatabaseURLError(message: "the database URL names no database") }
        let tls = try DatabaseTLS(url: url, caFile: caFile)
        self.init(
            host: host,
            port: url.port ?? 5432,
            username: user.removingPercentEncoding ?? user,
            password: url.password.map { $0.removingPercentEncoding ?? $0 },
            database: database,
            tls: try tls.postgresTLS()
        )
    }
}

/// libpq's `sslmode` values that Livecast honours.
package enum DatabaseTLSMode: String, Sendable, CaseIterable {
    /// No TLS.
    case disable
    /// TLS when the server offers it (Livecast treats it as `prefer`).
    case allow
    /// TLS when the server offers it, else plain text; not verified.
    case prefer
    /// TLS always, not verified (verified as `verify-ca` when a CA file is given).
    case require
    /// TLS, with a certificate that chains to a trusted CA.
    case verifyCA = "verify-ca"
    /// TLS, with a certificate that chains to a trusted CA and names the host.
    case verifyFull = "verify-full"

    /// The mode of a URL without `sslmode`: encrypted, not downgradable.
    package static let `default` = DatabaseTLSMode.require
}

/// How the service's connections to PostgreSQL use TLS: a URL's `sslmode` and the CA file to trust.
package struct DatabaseTLS: Sendable, Hashable {
    /// The `sslmode`; ``DatabaseTLSMode/default`` when the URL has none.
    package let mode: DatabaseTLSMode
    /// The PEM file of the CAs to trust: the one given, else the URL's `sslrootcert`, else none (the system's roots).
    package let caFile: String?

    /// Reads the TLS settings of a database URL.
    /// - Parameters:
    ///   - url: The URL's components.
    ///   - caFile: A CA file that takes the place of the URL's `sslrootcert`.
    /// - Throws: ``DatabaseURLError`` for an unknown `sslmode`.
    package init(url: URLComponents, caFile: String? = nil) throws(DatabaseURLError) {
        let query = url.queryItems ?? []
        let mode = query.first { $0.name == "sslmode" }?.value ?? DatabaseTLSMode.default.rawValue
        guard let parsed = DatabaseTLSMode(rawValue: mode) else { throw DatabaseURLError(message: "unsupported sslmode \(mode)") }
        self.mode = parsed
        self.caFile = caFile ?? query.first { $0.name == "sslrootcert" }?.value
    }

    /// The TLS configuration the client uses, or `nil` for `disable`.
    /// - Throws: ``DatabaseURLError`` when the CA file holds no readable PEM certificate.
    package func clientConfiguration() throws(DatabaseURLError) -> TLSConfiguration? {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let caFile = self.caFile {
            guard let certificates = try? NIOSSLCertificate.fromPEMFile(caFile), !certificates.isEmpty else {
                throw DatabaseURLError(message: "cannot read PEM certificates from the database CA file \(caFile)")
            }
            configuration.trustRoots = .certificates(certificates)
        }
        switch self.mode {
        case .disable:
            return nil
        case .allow, .prefer:
            configuration.certificateVerification = .none
        case .require where self.caFile == nil:
            configuration.certificateVerification = .none
        case .require, .verifyCA:
            configuration.certificateVerification = .noHostnameVerification
        case .verifyFull:
            configuration.certificateVerification = .fullVerification
        }
        return configuration
    }

    /// PostgresNIO's TLS setting: `prefer` may fall back to plain text, every other mode but `disable` may not.
    func postgresTLS() throws(DatabaseURLError) -> PostgresClient.Configuration.TLS {
        guard let configuration = try self.clientConfiguration() else { return .disable }
        return [.allow, .prefer].contains(self.mode) ? .prefer(configuration) : .require(configuration)
    }
}

/// A database URL that cannot be used. Its message never repeats the password.
package struct DatabaseURLError: Error, CustomStringConvertible {
    /// What is wrong.
    package let message: String
    package var description: String { self.message }
}
