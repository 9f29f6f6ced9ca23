#if canImport(Glibc)
import Glibc
#endif

/// Free TCP ports on the loopback interface, for programs that must be told their port (PostgreSQL here; the
/// server and the emulator in the tests).
package enum FreePort {
    /// Why no port could be found.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// A port nothing listens on right now. Another program can take it before yours binds it.
    /// - Throws: ``Failure`` when the system refuses a socket.
    package static func next() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "cannot find a free port: socket() failed") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let found = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard found else { throw Failure(description: "cannot find a free port: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
