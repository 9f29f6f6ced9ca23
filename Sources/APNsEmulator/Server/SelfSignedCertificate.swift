import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// The emulator's TLS identity: a self-signed P-256 certificate made at start, valid for `localhost`, the loopback
/// addresses and the configured host names (by default Apple's APNs host names), so clients can trust it from a file.
struct SelfSignedCertificate {
    /// The certificate in PEM form, for clients to trust.
    let pem: String
    let certificate: NIOSSLCertificate
    let privateKey: NIOSSLPrivateKey

    /// Host names the certificate is valid for: `localhost` and `hostNames`.
    let dnsNames: [String]

    init(hostNames: [String] = APNsEmulator.Configuration.appleHostNames) throws {
        let dnsNames = ["localhost"] + hostNames.filter { $0 != "localhost" }
        self.dnsNames = dnsNames
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName {
            CommonName("Livecast APNs emulator")
            OrganizationName("Livecast")
        }
        let now = Date()
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(digitalSignature: true, keyCertSign: true))
            try ExtendedKeyUsage([.serverAuth])
            SubjectAlternativeNames(
                dnsNames.map { GeneralName.dnsName($0) } + [
                    .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
                    .ipAddress(ASN1OctetString(contentBytes: ArraySlice([UInt8](repeating: 0, count: 15) + [1]))),
                ]
            )
        }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(365 * 86400),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(key)
        )
        self.pem = try certificate.serializeAsPEM().pemString
        self.certificate = try NIOSSLCertificate(bytes: Array(self.pem.utf8), format: .pem)
        self.privateKey = try NIOSSLPrivateKey(bytes: Array(key.pemRepresentation.utf8), format: .pem)
    }

    /// A TLS server context that offers only ALPN `h2`, as APNs does.
    func makeServerContext() throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(self.certificate)],
            privateKey: .privateKey(self.privateKey)
        )
        configuration.applicationProtocols = ["h2"]
        configuration.minimumTLSVersion = .tlsv12
        return try NIOSSLContext(configuration: configuration)
    }
}
