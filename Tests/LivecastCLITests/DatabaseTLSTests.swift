import Foundation
import LivecastStore
import LivecastTesting
import LocalPostgres
import Logging
import PostgresNIO
import Testing

@testable import livecast

/// Database TLS against a real PostgreSQL that serves a certificate for `localhost` signed by a test CA: a URL without
/// `sslmode` verifies the certificate and its host name, `require` still connects but is named unverified, and a
/// password can come from a file instead of the URL.
@Suite struct DatabaseTLSTests {
    private let livecast = Fixtures.productsDirectory.appendingPathComponent("livecast").path

    /// The CA, a second CA that signed nothing, and the server's certificate (for `localhost` only) and key.
    private struct Certificates {
        let directory: TemporaryDirectory
        var ca: String { self.directory.path("ca.pem") }
        var otherCA: String { self.directory.path("other-ca.pem") }
        var serverCertificate: String { self.directory.path("server.pem") }
        var serverKey: String { self.directory.path("server.key") }
    }

    @Test func verifyFullIsTheDefaultAndRefusesAnUnknownCAOrAnotherHostName() async throws {
        let certificates = try await Self.makeCertificates()
        let postgres = try await Self.startPostgres(certificates)
        defer { Task { await postgres.stop() } }
        let port = postgres.port

        let byName = try Self.tls("postgres://livecast@localhost:\(port)/postgres", caFile: certificates.ca)
        #expect(byName.mode == .verifyFull && byName.isVerified)
        #expect(try await Self.connects(byName, host: "localhost", port: port) == nil, "the CA's certificate for localhost is accepted")

        let wrongHost = try await Self.connects(
            try Self.tls("postgres://livecast@127.0.0.1:\(port)/postgres", caFile: certificates.ca),
            host: "127.0.0.1",
            port: port
        )
        #expect(wrongHost != nil, "the certificate names localhost, not 127.0.0.1")
        let unknownCA = try await Self.connects(
            try Self.tls("postgres://livecast@localhost:\(port)/postgres", caFile: certificates.otherCA),
            host: "localhost",
            port: port
        )
        #expect(unknownCA != nil, "a certificate from a CA not trusted is refused")
        let systemRoots = try await Self.connects(try Self.tls("postgres://livecast@localhost:\(port)/postgres"), host: "localhost", port: port)
        #expect(systemRoots != nil, "the system's roots do not know the test CA")

        let chainOnly = try Self.tls("postgres://livecast@127.0.0.1:\(port)/postgres?sslmode=verify-ca", caFile: certificates.ca)
        #expect(try await Self.connects(chainOnly, host: "127.0.0.1", port: port) == nil, "verify-ca checks the chain, not the name")

        let unverified = try Self.tls("postgres://livecast@127.0.0.1:\(port)/postgres?sslmode=require")
        #expect(!unverified.isVerified)
        #expect(unverified.summary.contains("UNVERIFIED"))
        #expect(try await Self.connects(unverified, host: "127.0.0.1", port: port) == nil, "require encrypts without verifying")

        // The whole path of a command: flags, PostgresClient, a query over TLS.
        let migrate = try await ExternalProcess.run(
            self.livecast,
            [
                "migrate", "--database-url", "postgres://livecast@localhost:\(port)/postgres", "--database-ca-file", certificates.ca,
                "--migrations", CLIDatabase.migrations,
            ]
        )
        #expect(migrate.status == 0, "\(migrate.stderr)")
        #expect(!migrate.stderr.contains("warning"), "\(migrate.stderr)")
        let unverifiedMigrate = try await ExternalProcess.run(
            self.livecast,
            ["migrate", "--database-url", "postgres://livecast@127.0.0.1:\(port)/postgres?sslmode=require", "--migrations", CLIDatabase.migrations]
        )
        #expect(unverifiedMigrate.status == 0, "\(unverifiedMigrate.stderr)")
        #expect(unverifiedMigrate.stdout.contains("up to date"), "\(unverifiedMigrate.stdout)")
    }

    @Test func requireIsNamedUnverifiedInPrintConfigAndWarnedAbout() async throws {
        let printed = try await ExternalProcess.run(
            self.livecast,
            [
                "serve", "--print-config", "--database-url", "postgres://livecast@db.example/livecast?sslmode=require",
                "--migrations", CLIDatabase.migrations,
            ]
        )
        #expect(printed.status == 0, "\(printed.stderr)")
        #expect(
            printed.stdout.contains("database-url = <secret>  # --database-url; sslmode=require: encrypted, UNVERIFIED (any certificate is trusted)"),
            "\(printed.stdout)"
        )
        let byDefault = try await ExternalProcess.run(
            "/usr/bin/env",
            [
                "DATABASE_URL=postgres://livecast@db.example/livecast", self.livecast, "serve", "--print-config", "--migrations",
                CLIDatabase.migrations,
            ]
        )
        #expect(
            byDefault.stdout.contains(
                "database-url = <secret>  # DATABASE_URL; sslmode=verify-full (the default): encrypted, the certificate and host name verified"
            ),
            "\(byDefault.stdout)"
        )

        // Warned before connecting (this host does not exist): by every command that uses the database, and by serve.
        let unverified = "postgres://livecast@db.invalid/livecast?sslmode=require"
        let commands = [
            ["migrate", "--database-url", unverified, "--migrations", CLIDatabase.migrations],
            [
                "serve", "--database-url", unverified, "--migrations", CLIDatabase.migrations, "--listen", "127.0.0.1:0", "--metrics-listen",
                "127.0.0.1:0",
            ],
        ]
        for arguments in commands {
            let command = try await BackgroundProcess(self.livecast, arguments)
            defer { command.signal(SIGKILL) }
            let deadline = ContinuousClock.now + .seconds(30)
            while !command.stderr.contains("database TLS is UNVERIFIED"), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(
                command.stderr.contains("database TLS is UNVERIFIED (sslmode=require): any certificate is trusted"),
                "\(arguments[0]): \(command.stderr)"
            )
            #expect(command.stderr.contains("warning"), "\(arguments[0]): \(command.stderr)")
        }

        // Verified, or on this machine's loopback: nothing to warn about.
        #expect(try Self.tls("postgres://livecast@db.example/livecast").warning == nil)
        #expect(try Self.tls("postgres://livecast@db.example/livecast?sslmode=require", caFile: "/ca.pem").warning == nil)
        #expect(try Self.tls("postgres://livecast@127.0.0.1:5432/livecast?sslmode=require").warning == nil)
        #expect(try Self.tls("postgres://livecast@[::1]:5432/livecast?sslmode=disable").warning == nil)
        #expect(try Self.tls("postgres://livecast@127.example/livecast?sslmode=disable").warning?.contains("NOT encrypted") == true)
        #expect(try Self.tls("postgres://livecast@db.example/livecast?sslmode=prefer").warning?.contains("UNVERIFIED") == true)
    }

    @Test func thePasswordComesFromAFileAndAPasswordOnTheCommandLineIsWarnedAbout() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.path("password")
        try "s3cret\n".write(toFile: file, atomically: false, encoding: .utf8)
        let config = try LivecastConfig(configFile: nil, environment: ["DATABASE_URL": "postgres://livecast@db.example/livecast?sslmode=disable"])
        let configuration = try config.read(flags: ["database-password-file": file]) { try PostgresClient.Configuration(reader: $0) }
        #expect(configuration.password == "s3cret", "the file's text without its line break")

        let both = try LivecastConfig(configFile: nil, environment: ["DATABASE_URL": "postgres://livecast:other@db.example/livecast"])
        #expect(throws: (any Error).self) { try both.read(flags: ["database-password-file": file]) { try PostgresClient.Configuration(reader: $0) } }
        let refusals = [
            (both, file, "--database-password-file cannot be used with a password in database-url"),
            (config, directory.path("missing"), "--database-password-file cannot be read"),
        ]
        for (settings, path, message) in refusals {
            do {
                _ = try settings.read(flags: ["database-password-file": path]) { try PostgresClient.Configuration(reader: $0) }
                Issue.record("\(message): accepted")
            } catch {
                #expect("\(error)".contains(message), "\(error)")
                #expect(!"\(error)".contains("other"), "the URL's password is never repeated")
            }
        }

        // A real login with the password from the file.
        let postgres = try await TemporaryPostgres.start()
        defer { Task { await postgres.stop() } }
        try await TestPostgres.withClient(postgres.configuration) { client in
            _ = try await client.query("CREATE ROLE reader LOGIN SUPERUSER PASSWORD 's3cret'")
        }
        let hba = postgres.directory.appendingPathComponent("data/pg_hba.conf")
        let rules = try String(contentsOf: hba, encoding: .utf8)
        try ("host all reader 127.0.0.1/32 scram-sha-256\n" + rules).write(to: hba, atomically: false, encoding: .utf8)
        try await TestPostgres.withClient(postgres.configuration) { client in _ = try await client.query("SELECT pg_reload_conf()") }
        let url = "postgres://reader@127.0.0.1:\(postgres.port)/postgres?sslmode=disable"
        let withFile = try await ExternalProcess.run(
            self.livecast,
            ["migrate", "--database-url", url, "--database-password-file", file, "--migrations", CLIDatabase.migrations]
        )
        #expect(withFile.status == 0, "logged in with the password (pg_hba.conf asks reader for it): \(withFile.stderr)")
        #expect(!withFile.stderr.contains("warning"), "\(withFile.stderr)")

        let onTheCommandLine = try await ExternalProcess.run(
            self.livecast,
            [
                "migrate", "--database-url", "postgres://reader:s3cret@127.0.0.1:\(postgres.port)/postgres?sslmode=disable", "--migrations",
                CLIDatabase.migrations,
            ]
        )
        #expect(onTheCommandLine.stderr.contains("warning: the database password is on the command line"), "\(onTheCommandLine.stderr)")
    }

    // MARK: - Helpers

    private static func tls(_ url: String, caFile: String? = nil) throws -> DatabaseTLS {
        try DatabaseTLS(url: try #require(URLComponents(string: url)), caFile: caFile)
    }

    /// Connects with `tls` as the service's client would and asks PostgreSQL whether the connection is encrypted.
    /// - Returns: `nil` when it connected over TLS, else the error that refused it.
    private static func connects(_ tls: DatabaseTLS, host: String, port: Int) async throws -> (any Error)? {
        let configuration = try #require(try tls.clientConfiguration())
        let context = try NIOSSLContext(configuration: configuration)
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(
                configuration: .init(host: host, port: port, username: "livecast", password: nil, database: "postgres", tls: .require(context)),
                id: 1,
                logger: Logger(label: "test.tls", factory: { _ in SwiftLogNoOpLogHandler() })
            )
        } catch {
            return error
        }
        defer { Task { try? await connection.close() } }
        let rows = try await connection.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", logger: Logger(label: "test.tls"))
        var encrypted = false
        for try await ssl in rows.decode(Bool.self) { encrypted = ssl }
        #expect(encrypted)
        return nil
    }

    /// A test CA and a certificate it signed for `localhost` (no address), the key readable by PostgreSQL only.
    private static func makeCertificates() async throws -> Certificates {
        let certificates = Certificates(directory: try TemporaryDirectory())
        let directory = certificates.directory
        let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n".write(toFile: directory.path("ext.cnf"), atomically: false, encoding: .utf8)
        let steps: [[String]] = [
            ["req", "-x509"] + curve + ["-keyout", directory.path("ca.key"), "-out", certificates.ca, "-days", "1", "-subj", "/CN=Test CA"],
            ["req", "-x509"] + curve + ["-keyout", directory.path("other.key"), "-out", certificates.otherCA, "-days", "1", "-subj", "/CN=Test CA"],
            ["req", "-new"] + curve + ["-keyout", certificates.serverKey, "-out", directory.path("server.csr"), "-subj", "/CN=localhost"],
            [
                "x509", "-req", "-in", directory.path("server.csr"), "-CA", certificates.ca, "-CAkey", directory.path("ca.key"),
                "-CAcreateserial", "-out", certificates.serverCertificate, "-days", "1", "-extfile", directory.path("ext.cnf"),
            ],
        ]
        for step in steps {
            let made = try await ExternalProcess.run("openssl", step)
            try #require(made.status == 0, "openssl \(step.joined(separator: " ")): \(made.stderr)")
        }
        // PostgreSQL runs as the postgres user when the tests run as root, and wants its key private to itself.
        chmod(directory.path(""), 0o755)
        chmod(certificates.serverKey, 0o600)
        if getuid() == 0, let user = getpwnam("postgres") {
            for file in [certificates.serverKey, certificates.serverCertificate] { chown(file, user.pointee.pw_uid, user.pointee.pw_gid) }
        }
        return certificates
    }

    private static func startPostgres(_ certificates: Certificates) async throws -> TemporaryPostgres {
        try await TemporaryPostgres.start(settings: [
            "ssl": "on", "ssl_cert_file": certificates.serverCertificate, "ssl_key_file": certificates.serverKey,
        ])
    }
}
