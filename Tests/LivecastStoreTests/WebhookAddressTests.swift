import LivecastStore
import Testing

/// Which addresses a webhook may be delivered to: public unicast only, whatever the spelling of a private one.
@Suite struct WebhookAddressTests {
    @Test func publicAddressesArePublic() {
        for address in [
            "8.8.8.8", "203.0.113.7", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2001:4860:4860::8888", "[2606:4700::1111]", "::ffff:8.8.8.8",
        ] {
            #expect(WebhookAddress.isPublic(address) == true, "\(address)")
        }
    }

    @Test func loopbackPrivateLinkLocalAndOtherSpecialAddressesAreNot() {
        let refused = [
            "127.0.0.1", "127.8.9.10", "::1", "[::1]", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1",
            "169.254.169.254", "169.254.0.1", "0.0.0.0", "100.64.0.1", "100.127.255.255", "224.0.0.1", "239.1.2.3",
            "255.255.255.255", "::", "fc00::1", "fd12:3456::1", "fe80::1", "fe80::1%eth0", "febf::1", "ff02::1",
            "::ffff:127.0.0.1", "::ffff:10.1.2.3", "::ffff:169.254.169.254", "::ffff:192.168.0.1", "::ffff:a9fe:a9fe",
            "64:ff9b::10.0.0.1", "::127.0.0.1",
        ]
        for address in refused {
            #expect(WebhookAddress.isPublic(address) == false, "\(address)")
        }
    }

    @Test func namesAndMalformedLiteralsAreNotAddresses() {
        for text in ["example.com", "localhost", "", "1.2.3", "1.2.3.4.5", "256.1.1.1", "0x7f.0.0.1", "010.0.0.1", "::g", "[]"] {
            #expect(WebhookAddress.isPublic(text) == nil, "\(text)")
        }
    }

    @Test func loopbackIsThisHostByAddressOrName() {
        for address in ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST", "localhost.", "::ffff:127.0.0.1"] {
            #expect(WebhookAddress.isLoopback(address), "\(address)")
        }
        for address in ["10.0.0.1", "8.8.8.8", "::", "::2", "example.com", "localhost.example.com", "0.0.0.0"] {
            #expect(!WebhookAddress.isLoopback(address), "\(address)")
        }
    }
}
