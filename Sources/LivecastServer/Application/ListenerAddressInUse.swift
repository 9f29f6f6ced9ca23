import Glibc
import NIOCore
import ServiceLifecycle

/// A listener could not bind its address because something else holds it, such as a second instance on the same
/// host: the error names the setting that gives this one another address.
package struct ListenerAddressInUse: Error, CustomStringConvertible {
    /// Which listener: `API` or `metrics`.
    package var listener: String
    /// `HOST:PORT`.
    package var address: String
    /// The flag (and its environment variable) that sets the address.
    package var setting: String

    /// A listener of `address` that cannot bind it, set by `setting`.
    package init(listener: String, address: String, setting: String) {
        self.listener = listener
        self.address = address
        self.setting = setting
    }

    package var description: String {
        "the \(self.listener) listener cannot bind \(self.address): the address is in use (another instance on this host?); "
            + "give this one another address with \(self.setting), or port 0 for a free one"
    }

    /// Whether `error` is a bind that failed because the address is in use.
    package static func isAddressInUse(_ error: any Error) -> Bool {
        (error as? IOError)?.errnoCode == EADDRINUSE
    }
}

/// Runs a listener's service, turning a failure to bind an address in use into ``ListenerAddressInUse``.
struct NamedListener<Listener: Service>: Service {
    let listener: Listener
    let failure: ListenerAddressInUse

    func run() async throws {
        do {
            try await self.listener.run()
        } catch  where ListenerAddressInUse.isAddressInUse(error) {
            throw self.failure
        }
    }
}
