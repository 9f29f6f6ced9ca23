import Foundation
import LivecastCore

/// The simulated devices, indexed by every token and channel that reaches them.
///
/// Applies what APNs accepted the way ActivityKit documents it. Not thread-safe by itself; ``EmulatorState`` guards it.
struct DeviceFleet {
    /// What a token reaches.
    private enum TokenOwner {
        case pushToStart(device: Int, attributesType: String)
        case activity(device: Int, activity: Int)
    }

    private(set) var devices: [SimulatedDevice] = []
    private var deviceIndexByID: [String: Int] = [:]
    private var owners: [String: TokenOwner] = [:]
    private var channelSubscribers: [String: [(device: Int, activity: Int)]] = [:]
    /// Tokens replaced by rotation, with the time (milliseconds since 1970) APNs learnt they are no longer valid.
    private(set) var retiredTokens: [String: Int] = [:]

    /// Adds a device.
    /// - Parameters:
    ///   - bundleID: The app on the device.
    ///   - osVersion: The iOS version.
    ///   - pushToStartTokens: Push-to-start tokens by `ActivityAttributes` type; an empty token string gets a random one.
    /// - Throws: `APNsFailure` (400) when a given token is not hex or is already in use.
    mutating func addDevice(
        bundleID: String,
        osVersion: String,
        pushToStartTokens: [String: String]
    ) throws(APNsFailure) -> SimulatedDevice {
        var tokens: [String: String] = [:]
        for (attributesType, token) in pushToStartTokens {
            guard let token = token.isEmpty ? Self.newToken() : DeviceToken.normalized(token),
                self.owners[token] == nil, !tokens.values.contains(token)
            else {
                throw APNsFailure(400, "BadDeviceToken")
            }
            tokens[attributesType] = token
        }
        let device = SimulatedDevice(
            id: UUID().uuidString.lowercased(),
            bundleID: bundleID,
            osVersion: osVersion,
            pushToStartTokens: tokens
        )
        let index = self.devices.count
        self.devices.append(device)
        self.deviceIndexByID[device.id] = index
        for (attributesType, token) in tokens {
            self.owners[token] = .pushToStart(device: index, attributesType: attributesType)
        }
        return device
    }

    /// The app a token belongs to, or `nil` for a token no device holds.
    func bundleID(ofToken token: String) -> String? {
        switch self.owners[token] {
        case .none: nil
        case .pushToStart(let device, _), .activity(let device, _): self.devices[device].bundleID
        }
    }

    /// Hands a device push that APNs accepted to the device that holds the token.
    /// - Parameters:
    ///   - body: The payload.
    ///   - token: The device token from the path.
    ///   - isPriority10: Whether the push had priority 10 (also APNs' default).
    ///   - pushID: The push's `apns-id`.
    ///   - collapseID: The push's `apns-collapse-id`: a start with the collapse id of an activity the device shows
    ///     is a repeat.
    ///   - context: The device clock and rules.
    /// - Returns: Why the device ignored the push; `nil` when it applied it, or when no device holds the token.
    @discardableResult
    mutating func deliver(
        _ body: [UInt8],
        toToken token: String,
        isPriority10: Bool,
        pushID: String,
        collapseID: String? = nil,
        context: DeliveryContext
    ) -> IgnoredPush.Reason? {
        guard let owner = self.owners[token] else { return nil }
        let deviceIndex: Int
        switch owner {
        case .pushToStart(let device, _), .activity(let device, _): deviceIndex = device
        }
        let decoded = try? LiveActivityPayload.decodedAsDevice(body)
        let payload = decoded?.payload
        if isPriority10, !self.devices[deviceIndex].spendPriority10(now: context.now, budget: context.priority10Budget) {
            return self.ignore(.priorityBudgetExceeded, payload, owner: owner, now: context.now)
        }
        guard let payload else {
            return self.ignore(.malformedPayload, nil, owner: owner, now: context.now)
        }
        if let key = decoded?.undocumentedAlertKey {
            return self.ignore(.undocumentedAlertKey, payload, detail: key, owner: owner, now: context.now)
        }
        switch owner {
        case .pushToStart(let device, let attributesType):
            return self.start(payload, device: device, attributesType: attributesType, pushID: pushID, collapseID: collapseID, context: context)
        case .activity(let device, let activity):
            return self.devices[device].activities[activity].apply(payload, pushID: pushID, now: context.now)
        }
    }

    /// Hands a broadcast that APNs accepted to every activity subscribed to the channel.
    /// - Parameter pushID: The broadcast's `apns-request-id`.
    /// - Returns: How many subscribers applied it, the ids of the subscribers' devices, and why every subscriber
    ///   ignored it for what it carries (malformed, or an alert key ActivityKit does not document), if they did.
    @discardableResult
    mutating func broadcast(_ body: [UInt8], channelID: String, pushID: String, now: Int) -> BroadcastDelivery {
        let decoded = try? LiveActivityPayload.decodedAsDevice(body)
        let refusal: (reason: IgnoredPush.Reason, detail: String?)? =
            switch decoded {
            case .none: (.malformedPayload, nil)
            case .some(let decoded): decoded.undocumentedAlertKey.map { (.undocumentedAlertKey, $0) }
            }
        var applied = 0
        for subscriber in self.channelSubscribers[channelID] ?? [] {
            if let decoded, refusal == nil {
                if self.devices[subscriber.device].activities[subscriber.activity].apply(decoded.payload, pushID: pushID, now: now) == nil {
                    applied += 1
                }
            } else if let refusal {
                self.devices[subscriber.device].activities[subscriber.activity]
                    .ignore(refusal.reason, decoded?.payload, detail: refusal.detail, now: now)
            }
        }
        return BroadcastDelivery(
            applied: applied,
            devices: (self.channelSubscribers[channelID] ?? []).map { self.devices[$0.device].id },
            refusal: refusal?.reason
        )
    }

    /// Replaces a push-to-start token, as iOS does now and then; the old token then answers 410.
    /// - Returns: The new token, or `nil` when the device has no token for that type.
    mutating func rotatePushToStartToken(deviceID: String, attributesType: String, nowMillis: Int) -> String? {
        guard let index = self.deviceIndexByID[deviceID],
            let old = self.devices[index].pushToStartTokens[attributesType]
        else { return nil }
        let new = Self.newToken()
        self.devices[index].pushToStartTokens[attributesType] = new
        self.owners[old] = nil
        self.owners[new] = .pushToStart(device: index, attributesType: attributesType)
        self.retiredTokens[old] = nowMillis
        return new
    }

    /// Replaces an activity's update token, as iOS may during the activity; the old token then answers 410.
    /// - Returns: The new token, or `nil` when there is no such token-based activity.
    mutating func rotateUpdateToken(deviceID: String, activityID: String, nowMillis: Int) -> String? {
        guard let index = self.deviceIndexByID[deviceID],
            let activityIndex = self.devices[index].activities.firstIndex(where: { $0.id == activityID }),
            let old = self.devices[index].activities[activityIndex].updateToken
        else { return nil }
        let new = Self.newToken()
        self.devices[index].activities[activityIndex].updateToken = new
        self.owners[old] = nil
        self.owners[new] = .activity(device: index, activity: activityIndex)
        self.retiredTokens[old] = nowMillis
        return new
    }

    /// Removes an activity from its device without an end, as the system or the user may, while its token keeps
    /// answering 200 (the "APNs said 200 and the phone did not change" case).
    /// - Returns: Whether there was such an activity.
    mutating func loseActivity(deviceID: String, activityID: String) -> Bool {
        guard let index = self.deviceIndexByID[deviceID],
            let activityIndex = self.devices[index].activities.firstIndex(where: { $0.id == activityID })
        else { return false }
        self.devices[index].activities[activityIndex].lifecycle.isLost = true
        return true
    }

    /// The device with this id.
    func device(id: String) -> SimulatedDevice? {
        self.deviceIndexByID[id].map { self.devices[$0] }
    }

    // MARK: - Starting activities

    /// Starts an activity from a push-to-start, as iOS does, or ignores the push. - Returns: why it was ignored.
    private mutating func start(
        _ payload: LiveActivityPayload,
        device: Int,
        attributesType: String,
        pushID: String,
        collapseID: String?,
        context: DeliveryContext
    ) -> IgnoredPush.Reason? {
        let owner = TokenOwner.pushToStart(device: device, attributesType: attributesType)
        guard payload.event == .start else {
            return self.ignore(.notAStart, payload, owner: owner, now: context.now)
        }
        if let collapseID,
            self.devices[device].activities.contains(where: { $0.pushes.startCollapseID == collapseID && !$0.lifecycle.isDismissed(at: context.now) })
        {
            return self.ignore(.duplicateStart, payload, detail: collapseID, owner: owner, now: context.now)
        }
        do {
            _ = try payload.validated(for: .device)
        } catch {
            return self.ignore(.invalidStart, payload, detail: error.message, owner: owner, now: context.now)
        }
        guard payload.attributesType == attributesType else {
            return self.ignore(.attributesTypeMismatch, payload, owner: owner, now: context.now)
        }
        if let channelID = payload.inputPushChannel {
            guard self.devices[device].supportsChannels else {
                return self.ignore(.channelRequiresIOS18, payload, owner: owner, now: context.now)
            }
            guard context.channelExists(channelID, self.devices[device].bundleID) else {
                return self.ignore(.unknownChannel, payload, detail: channelID, owner: owner, now: context.now)
            }
        }
        guard self.devices[device].spendPushToStart(now: context.now, budget: context.pushToStartBudget) else {
            return self.ignore(.startBudgetExceeded, payload, owner: owner, now: context.now)
        }
        // Without input-push-channel the activity gets its own update token: with input-push-token on iOS 18,
        // and through pushTokenUpdates on earlier versions.
        let updateToken = payload.inputPushChannel == nil ? Self.newToken() : nil
        let activity = SimulatedActivity(
            id: UUID().uuidString.lowercased(),
            updateToken: updateToken,
            channelID: payload.inputPushChannel,
            content: .init(
                attributesType: attributesType,
                attributes: payload.attributes!,
                contentState: payload.contentState!,
                staleDate: payload.staleDate,
                relevanceScore: payload.relevanceScore
            ),
            lifecycle: .init(startedAt: context.now, lifetime: context.activityLifetime),
            pushes: .init(lastTimestamp: payload.timestamp, lastPushID: pushID, startCollapseID: collapseID)
        )
        let activityIndex = self.devices[device].activities.count
        self.devices[device].activities.append(activity)
        if let updateToken {
            self.owners[updateToken] = .activity(device: device, activity: activityIndex)
        }
        if let channelID = payload.inputPushChannel {
            self.channelSubscribers[channelID, default: []].append((device, activityIndex))
        }
        return nil
    }

    /// Remembers an ignored push where its target keeps them. - Returns: `reason`.
    private mutating func ignore(
        _ reason: IgnoredPush.Reason,
        _ payload: LiveActivityPayload?,
        detail: String? = nil,
        owner: TokenOwner,
        now: Int
    ) -> IgnoredPush.Reason {
        switch owner {
        case .pushToStart(let device, _):
            self.devices[device].ignoredPushes.remember(
                IgnoredPush(reason: reason, detail: detail, event: payload?.event.rawValue, timestamp: payload?.timestamp, receivedAt: now)
            )
        case .activity(let device, let activity):
            self.devices[device].activities[activity].ignore(reason, payload, detail: detail, now: now)
        }
        return reason
    }

    // MARK: - Tokens

    /// A random 32-byte token in hex, like an APNs device token.
    static func newToken() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

}

/// The device clock and the rules a delivery is judged by.
struct DeliveryContext {
    /// The device clock, in seconds since 1970.
    var now: Int
    /// Priority-10 pushes a device accepts per hour, or `nil` for no limit.
    var priority10Budget: Int?
    /// Push-to-start notifications a device takes in a window, or `nil` for no limit.
    var pushToStartBudget: APNsEmulator.PushToStartBudget?
    /// How long a started activity stays active, in seconds.
    var activityLifetime: Int
    /// Whether a channel exists for an app: `(channelID, bundleID)`.
    var channelExists: (String, String) -> Bool
}

/// What a broadcast did on the devices subscribed to its channel.
struct BroadcastDelivery {
    /// Subscribers that applied it.
    var applied: Int
    /// The ids of the subscribers' devices.
    var devices: [String]
    /// Why every subscriber ignored it for what it carries (malformed, or an undocumented alert key), if they did.
    var refusal: IgnoredPush.Reason?
}
