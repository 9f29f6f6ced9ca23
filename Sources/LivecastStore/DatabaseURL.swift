package import Foundation
package import PostgresNIO

extension PostgresClient.Configuration {
    /// Reads a connection URL: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=MODE][&sslrootcert=FILE]`.
    ///
    /// `sslmode` means what it means to libpq, but defaults to `verify-full` (libpq's default is `prefer`):
    /// - `disable`: no TLS.
    /// - `allow`, `prefer`: TLS when the server offers it, else plain text (downgradable; not verified).
    /// - `require`: TLS always; the server's certificate is not verified (encryption only), unless a CA file is given,
    ///   which makes it `verify-ca` as in libpq.
    /// - `verify-ca`: TLS, and the server's certificate must chain to the CA file (else the system's trust roots).
    /// - `verify-full`, the default: as `verify-ca`, and the certificate must also name the URL's host.
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

    /// The mode of a URL without `sslmode`: encrypted, not downgradable, and the server's certificate and host name
    /// verified, so that no one on the path can pose as PostgreSQL.
    package static let `default` = DatabaseTLSMode.verifyFull
}

/// How the service's connections to PostgreSQL use TLS: a URL's `sslmode` and the CA file to trust.
package struct DatabaseTLS: Sendable, Hashable {
    /// The `sslmode`; ``DatabaseTLSMode/default`` when the URL has none.
    package let mode: DatabaseTLSMode
    /// The PEM file of the CAs to trust: the one given, else the URL's `sslrootcert`, else none (the system's roots).
    package let caFile: String?
    /// Whether the URL names its `sslmode`; else it is ``DatabaseTLSMode/default``.
    package let modeIsGiven: Bool
    /// The URL's host, to judge whether an unverified connection can be intercepted.
    package let host: String

    /// Reads the TLS settings of a database URL.
    /// - Parameters:
    ///   - url: The URL's components.
    ///   - caFile: A CA file that takes the place of the URL's `sslrootcert`.
    /// - Throws: ``DatabaseURLError`` for an unknown `sslmode`.
    package init(url: URLComponents, caFile: String? = nil) throws(DatabaseURLError) {
        let query = url.queryItems ?? []
        let mode = query.first { $0.name == "sslmode" }?.value ?? DatabaseTLSMode.default.rawValue
        guard let parsed = DatabaseTLSMode(rawValue: mode) else {
            throw DatabaseURLError(
                message: "unsupported sslmode \(mode) (allowed: \(DatabaseTLSMode.allCases.map(\.rawValue).joined(separator: ", ")))"
            )
        }
        self.mode = parsed
        self.modeIsGiven = query.contains { $0.name == "sslmode" }
        self.caFile = caFile ?? query.first { $0.name == "sslrootcert" }?.value
        self.host = url.host ?? ""
    }

    /// Whether the server's certificate is checked: its chain (`verify-ca`, or `require` with a CA file) or its chain
    /// and host name (`verify-full`). Unverified TLS encrypts, but trusts whoever answers.
    package var isVerified: Bool {
        switch self.mode {
        case .disable, .allow, .prefer: false
        case .require: self.caFile != nil
        case .verifyCA, .verifyFull: true
        }
    }

    /// What the connections get, for `--print-config`: `sslmode=require: encrypted, UNVERIFIED (…)`.
    package var summary: String {
        let mode = "sslmode=\(self.mode.rawValue)" + (self.modeIsGiven ? "" : " (the default)")
        switch self.mode {
        case .disable:
            return "\(mode): NOT encrypted"
        case .allow, .prefer:
            return "\(mode): encrypted only if the server offers it, UNVERIFIED (any certificate is trusted)"
        case .require where self.caFile == nil:
            return "\(mode): encrypted, UNVERIFIED (any certificate is trusted)"
        case .require, .verifyCA:
            return "\(mode): encrypted, the certificate's chain verified, not its host name"
        case .verifyFull:
            return "\(mode): encrypted, the certificate and host name verified"
        }
    }

    /// The warning to log at start when the connections can be read or intercepted by someone on the network; `nil`
    /// when they are verified, or when PostgreSQL is on this host's loopback (no network to be on).
    package var warning: String? {
        guard !self.isVerified, !Self.isLoopback(self.host) else { return nil }
        let fix = "use sslmode=verify-full (the default) with the CA that signs PostgreSQL's certificate (--database-ca-file)"
        switch self.mode {
        case .disable:
            return "database connections are NOT encrypted (sslmode=disable): \(fix)"
        default:
            return "database TLS is UNVERIFIED (sslmode=\(self.mode.rawValue)): any certificate is trusted, so anyone on the "
                + "path can pose as PostgreSQL and read the database password; \(fix)"
        }
    }

    /// Whether `host` is this machine's loopback: `localhost`, an address of 127.0.0.0/8, or `::1`.
    static func isLoopback(_ host: String) -> Bool {
        let host = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        let octets = host.split(separator: ".", omittingEmptySubsequences: false).map { UInt8($0) }
        let isIPv4Loopback = octets.count == 4 && octets.allSatisfy { $0 != nil } && octets[0] == 127
        return host == "localhost" || host == "::1" || isIPv4Loopback
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
