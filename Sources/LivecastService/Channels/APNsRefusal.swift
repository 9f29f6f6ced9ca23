/// APNs refused a request of a workflow (creating, listing or deleting a channel) or did not answer; the message
/// carries its status and reason. The HTTP API answers it with `502 apns_refused`.
public struct APNsRefusal: Error, CustomStringConvertible {
    /// A sentence for people, with APNs' status and reason.
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { self.message }
}
