import Foundation
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// The database URL's TLS: `sslmode` as libpq means it, `verify-full` by default, and a CA file to verify against.
@Suite struct DatabaseURLTests {
    @Test func aURLWithoutSSLModeVerifiesTheCertificateAndItsHostName() throws {
        let tls = try Self.tls("postgres://u@db.example/livecast")
        #expect(tls.mode == .verifyFull && !tls.modeIsGiven && tls.isVerified)
        #expect(DatabaseTLSMode.default == .verifyFull)
        #expect(try tls.clientConfiguration()?.certificateVerification == .fullVerification)
        #expect(tls.warning == nil)
        #expect(tls.summary == "sslmode=verify-full (the default): encrypted, the certificate and host name verified")

        let unverified = try Self.tls("postgres://u@db.example/livecast?sslmode=require")
        #expect(!unverified.isVerified)
        #expect(unverified.summary == "sslmode=require: encrypted, UNVERIFIED (any certificate is trusted)")
        #expect(unverified.warning?.hasPrefix("database TLS is UNVERIFIED (sslmode=require)") == true)
    }

    @Test func eachModeVerifiesWhatLibpqVerifies() throws {
        let expected: [(mode: String, verification: CertificateVerification?)] = [
            ("disable", nil),
            ("allow", CertificateVerification.none),
            ("prefer", CertificateVerification.none),
            ("require", CertificateVerification.none),
            ("verify-ca", .noHostnameVerification),
            ("verify-full", .fullVerification),
        ]
        for (mode, verification) in expected {
            let tls = try Self.tls("postgres://u:p@db.example:5433/livecast?sslmode=\(mode)")
            #expect(tls.mode.rawValue == mode)
            #expect(try tls.clientConfiguration()?.certificateVerification == verification, "sslmode=\(mode)")
            _ = try PostgresClient.Configuration(url: "postgres://u:p@db.example:5433/livecast?sslmode=\(mode)")
        }
        #expect(throws: DatabaseURLError.self) { try PostgresClient.Configuration(url: "postgres://u@db.example/livecast?sslmode=maybe") }
    }

    @Test func aCAFileIsTrustedAndMakesRequireVerifyTheChain() async throws {
        let directory = try TemporaryDirectory()
        let caFile = directory.path("ca.pem")
        let made = try await ExternalProcess.run(
            "openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", directory.path("ca.key"),
                "-out", caFile, "-days", "1", "-subj", "/CN=Test CA",
            ]
        )
        #expect(made.status == 0)

        let fromURL = try Self.tls("postgres://u@db.example/livecast?sslmode=verify-full&sslrootcert=\(caFile)")
        #expect(fromURL.caFile == caFile)
        let full = try #require(try fromURL.clientConfiguration())
        #expect(full.certificateVerification == .fullVerification)
        guard case .certificates(let roots) = full.trustRoots else {
            Issue.record("the CA file is not the trust root")
            return
        }
        #expect(roots.count == 1)

        let given = try Self.tls("postgres://u@db.example/livecast?sslmode=require&sslrootcert=/ignored.pem", caFile: caFile)
        #expect(given.caFile == caFile)
        #expect(try given.clientConfiguration()?.certificateVerification == .noHostnameVerification)

        #expect(throws: DatabaseURLError.self) {
            try PostgresClient.Configuration(url: "postgres://u@db.example/livecast?sslmode=verify-ca", caFile: directory.path("missing.pem"))
        }
    }

    private static func tls(_ url: String, caFile: String? = nil) throws -> DatabaseTLS {
        try DatabaseTLS(url: try #require(URLComponents(string: url)), caFile: caFile)
    }
}
