/// APNs refused a request of a workflow (creating, listing or deleting a channel) or did not answer; the message
/// carries its status and reason. The HTTP API answers it with `502 apns_refused`.
package struct APNsRefusal: Error, CustomStringConvertible {
    /// A sentence for people, with APNs' status and reason.
    package let message: String

    package init(_ message: String) {
        self.message = message
    }

    package var description: String { self.message }
}
