/// A push that did not get through, kept as a `deliveries` row.
package struct FailedPush: Sendable {
    package var updateID: Int64
    /// What `target` is.
    package var targetKind: DeliveryTargetKind
    /// The device token or the channel id.
    package var target: String
    package var status: Int?
    package var reason: String
    /// The push's `apns-id`, when Livecast set it.
    package var apnsID: String?

    package init(updateID: Int64, targetKind: DeliveryTargetKind = .device, target: String, status: Int?, reason: String, apnsID: String?) {
        self.updateID = updateID
        self.targetKind = targetKind
        self.target = target
        self.status = status
        self.reason = reason
        self.apnsID = apnsID
    }
}
