import NIOSSL

extension APNsClient.Endpoint {
    /// Whether the host is this machine's loopback (`localhost`, an address of 127.0.0.0/8, `::1`): a connection to
    /// it never leaves the machine.
    package var isLoopback: Bool {
        let host = self.host.lowercased()
        let octets = host.split(separator: ".", omittingEmptySubsequences: false).map { UInt8($0) }
        return host == "localhost" || host == "::1" || (octets.count == 4 && octets.allSatisfy { $0 != nil } && octets[0] == 127)
    }
}

extension APNsClient {
    /// Apple's APNs host names that the certificates of a PEM file name for themselves (DNS names of their subject
    /// alternative names under `push.apple.com`), as the APNs emulator's self-signed certificate does. A CA's
    /// certificate names no host; a certificate that names Apple's would let whoever holds its key answer as APNs.
    /// - Throws: ``TrustFileError`` when the file holds no readable PEM certificate.
    package static func appleHostNames(claimedBy pemFile: String) throws(TrustFileError) -> [String] {
        guard let certificates = try? NIOSSLCertificate.fromPEMFile(pemFile), !certificates.isEmpty else {
            throw TrustFileError(message: "holds no readable PEM certificate")
        }
        var names: [String] = []
        for certificate in certificates {
            for name in certificate._subjectAlternativeNames() where name.nameType == .dnsName {
                let host = String(decoding: name.contents, as: UTF8.self).lowercased()
                if host == "push.apple.com" || host.hasSuffix(".push.apple.com"), !names.contains(host) { names.append(host) }
            }
        }
        return names
    }

    /// A trust file that cannot be used.
    package struct TrustFileError: Error, CustomStringConvertible {
        /// What is wrong, as a phrase after the file's name.
        package let message: String
        package var description: String { self.message }
    }
}
