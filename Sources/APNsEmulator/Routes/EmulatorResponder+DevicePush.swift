import LivecastCore
import NIOCore

extension EmulatorResponder {
    /// Push types APNs knows; only `liveactivity` pushes reach the simulated activities.
    static let knownPushTypes: Set<APNsPushType> = [
        .alert, .background, .location, .voip, .complication, .fileprovider, .mdm, .liveactivity, .pushtotalk, .widgets, .controls,
    ]

    /// `POST /3/device/{token}`: checks in APNS-REFERENCE §4.1 and §7 order, then hands the push to the device.
    /// - Parameter apnsID: The push's `apns-id`, as sent or made; the device remembers the last one it applied.
    func devicePush(_ request: EmulatorRequest, token: String, apnsID: String) -> Result<EmulatorResponse, APNsFailure> {
        Result { () throws(APNsFailure) -> EmulatorResponse in
            let pushTypeHeader = try Self.uniqueHeader(request, "apns-push-type")
            let topic = try Self.uniqueHeader(request, "apns-topic")
            let priority = try Self.priority(request)
            _ = try Self.expiration(request)
            let collapseID = try Self.uniqueHeader(request, "apns-collapse-id")
            guard !token.isEmpty else { throw APNsFailure(400, "MissingDeviceToken") }
            guard let pushType = Self.pushType(pushTypeHeader) else { throw APNsFailure(400, "InvalidPushType") }
            guard let topic, !topic.isEmpty else { throw APNsFailure(400, "MissingTopic") }
            // Only Live Activity topics are checked for their suffix; any other push's topic is its bundle id.
            let isLiveActivity = pushType == .liveactivity
            guard let bundleID = isLiveActivity ? pushType.bundleID(fromTopic: topic) : topic else {
                throw APNsFailure(400, "BadTopic")
            }
            if let collapseID, collapseID.utf8.count > 64 { throw APNsFailure(400, "BadCollapseId") }
            guard let token = DeviceToken.normalized(token) else { throw APNsFailure(400, "BadDeviceToken") }
            let (unregisteredAt, owner) = self.state.withLock { contents in
                (contents.faults.unregisteredTokens[token] ?? contents.fleet.retiredTokens[token], contents.fleet.bundleID(ofToken: token))
            }
            if let unregisteredAt { throw APNsFailure(410, "Unregistered", timestamp: unregisteredAt) }
            switch owner {
            case .none where !self.state.configuration.acceptsUnknownTokens:
                throw APNsFailure(400, "BadDeviceToken")
            case .some(let ownerBundleID) where ownerBundleID != bundleID:
                throw APNsFailure(400, "DeviceTokenNotForTopic")
            default:
                break
            }
            try Self.checkPayload(request, limit: 4096)
            var ignoredBy: IgnoredPush.Reason?
            if isLiveActivity, owner != nil {
                // Copied only for a device that shows it: a push to an unknown token is answered, not kept.
                let body = Array(request.body.readableBytesView)
                let configuration = self.state.configuration
                ignoredBy = self.state.withLock { contents in
                    let ignored = contents.fleet.deliver(
                        body,
                        toToken: token,
                        isPriority10: (priority ?? 10) == 10,
                        pushID: apnsID,
                        collapseID: collapseID,
                        context: contents.deliveryContext(configuration)
                    )
                    contents.dataExports.tally.countDevicePush(
                        bundleID: bundleID,
                        pushType: pushType.headerValue,
                        applied: ignored == nil,
                        now: contents.deviceNow
                    )
                    return ignored
                }
            } else if isLiveActivity {
                self.state.withLock {
                    $0.dataExports.tally.countDevicePush(bundleID: bundleID, pushType: pushType.headerValue, applied: false, now: $0.deviceNow)
                }
            }
            var headers: [(String, String)] = []
            if self.state.configuration.environment == "sandbox" {
                headers.append(("apns-unique-id", UUIDText.random()))
            }
            var response = EmulatorResponse(status: 200, headers: headers)
            response.deviceDropped = ignoredBy.flatMap { IgnoredPush.Reason.silentDrops.contains($0) ? $0 : nil }
            return response
        }
    }

    /// The push type a device push names: `alert` when it names none, `nil` when APNs does not know it.
    /// - Parameter headerValue: The `apns-push-type` header, matched exactly (lowercase).
    static func pushType(_ headerValue: String?) -> APNsPushType? {
        guard let headerValue else { return .alert }
        guard let pushType = APNsPushType(headerValue: headerValue), Self.knownPushTypes.contains(pushType) else { return nil }
        return pushType
    }
}
