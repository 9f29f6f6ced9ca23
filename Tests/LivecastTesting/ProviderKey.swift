import APNsEmulator
import Foundation

/// An APNs signing key made with openssl for a test, and provider tokens signed with it by the openssl recipe
/// (`Tests/Fixtures/make-jwt.sh`), independently of Livecast's own signer.
package struct ProviderKey: Sendable {
    /// The `.p8` file.
    package let path: String
    /// The team id (`iss`).
    package let teamID: String
    /// The key id (`kid`).
    package let keyID: String
    private let directory: TemporaryDirectory

    /// Makes a new P-256 key in PKCS#8 PEM form with openssl.
    package static func make(teamID: String = "TEAM123456", keyID: String = "KEY1234567") async throws -> ProviderKey {
        let directory = try TemporaryDirectory()
        let path = directory.path("AuthKey_\(keyID).p8")
        let result = try await ExternalProcess.run(
            "bash",
            ["-c", "openssl ecparam -genkey -name prime256v1 -noout | openssl pkcs8 -topk8 -nocrypt -out '\(path)'"]
        )
        guard result.status == 0 else { throw TestFailure("openssl could not make a key: \(result.stderr)") }
        return ProviderKey(path: path, teamID: teamID, keyID: keyID, directory: directory)
    }

    /// The key as the emulator trusts it.
    package func trusted() throws -> TrustedKey {
        try TrustedKey(teamID: self.teamID, keyID: self.keyID, pem: String(contentsOfFile: self.path, encoding: .utf8))
    }

    /// A provider token with `iat` the given time (default now).
    package func token(issuedAt: Int? = nil) async throws -> String {
        var arguments = [Fixtures.makeJWTScript, self.path, self.keyID, self.teamID]
        if let issuedAt { arguments.append(String(issuedAt)) }
        return try await Self.run(arguments)
    }

    /// A token with hand-written claims and algorithm, to test malformed tokens.
    package func token(claims: String, algorithm: String = "ES256") async throws -> String {
        try await Self.run([Fixtures.makeJWTScript, self.path, self.keyID, "--claims", claims, "--alg", algorithm])
    }

    private static func run(_ arguments: [String]) async throws -> String {
        let result = try await ExternalProcess.run("bash", arguments)
        guard result.status == 0 else { throw TestFailure("make-jwt.sh failed: \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// A test precondition that did not hold.
package struct TestFailure: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
