import LivecastCore
import NIOCore

extension EmulatorResponder {
    /// The longest a Most Recent Message channel keeps a broadcast.
    static let maximumStorageSeconds = 8 * 3600

    /// `POST /4/broadcasts/apps/{bundleId}`: the checks of APNS-REFERENCE §7, in that order.
    /// - Parameter requestID: The broadcast's `apns-request-id`, as sent or made; subscribers remember the last one.
    func broadcast(_ request: EmulatorRequest, bundleID: String, requestID: String) -> Result<EmulatorResponse, APNsFailure> {
        Result { () throws(APNsFailure) -> EmulatorResponse in
            try self.checkBroadcastTopic(bundleID)
            guard let channelID = try Self.uniqueHeader(request, "apns-channel-id") else {
                throw APNsFailure(400, "MissingChannelId")
            }
            guard ChannelStore.isWellFormed(channelID) else { throw APNsFailure(400, "BadChannelId") }
            guard let pushType = try Self.uniqueHeader(request, "apns-push-type") else {
                throw APNsFailure(400, "MissingPushType")
            }
            // Apple spells it three ways for broadcasts (APNS-REFERENCE §2.2, §6), so any case is accepted.
            guard APNsPushType(headerValue: pushType.lowercased()) == .liveactivity else {
                throw APNsFailure(400, "InvalidPushType")
            }
            guard let expiration = try Self.expiration(request) else { throw APNsFailure(400, "BadExpirationDate") }
            guard try Self.priority(request) != nil else { throw APNsFailure(400, "BadPriority") }
            let now = EmulatorState.wallClock
            let ignoredBy = try self.state.withLock { contents throws(APNsFailure) -> IgnoredPush.Reason? in
                guard let channel = contents.channels.channel(channelID, bundleID: bundleID) else {
                    throw APNsFailure(400, "ChannelNotRegistered")
                }
                if channel.storagePolicy == 0, expiration != 0 { throw APNsFailure(400, "BadExpirationDate") }
                let body = try Self.payload(request, limit: 5120)
                if channel.storagePolicy == 1, expiration != 0 {
                    let expiresAt = min(expiration, now + Self.maximumStorageSeconds)
                    contents.channels.store(String(decoding: body, as: UTF8.self), expiresAt: expiresAt, in: channelID)
                }
                let delivery = contents.fleet.broadcast(body, channelID: channelID, pushID: requestID, now: contents.deviceNow)
                contents.dataExports.tally.countBroadcast(
                    bundleID: bundleID,
                    channelID: channelID,
                    applied: delivery.applied,
                    devices: delivery.devices,
                    now: contents.deviceNow
                )
                return delivery.refusal
            }
            var response = EmulatorResponse(status: 200, headers: [("apns-unique-id", UUIDText.random())])
            response.deviceDropped = ignoredBy.flatMap { IgnoredPush.Reason.silentDrops.contains($0) ? $0 : nil }
            return response
        }
    }

    /// A bundle id with a push-type suffix is `TopicDisallowed`; an app without the capability `FeatureNotEnabled`.
    func checkBroadcastTopic(_ bundleID: String) throws(APNsFailure) {
        guard !bundleID.contains(".push-type.") else { throw APNsFailure(400, "TopicDisallowed") }
        guard !self.state.configuration.broadcastDisabledBundleIDs.contains(bundleID) else {
            throw APNsFailure(400, "FeatureNotEnabled")
        }
    }
}
