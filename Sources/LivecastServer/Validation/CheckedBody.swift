/// A request body with limits its JSON types do not express (``InputLimits``). `Request.decodeJSON(as:context:)`
/// checks them right after decoding, so no route can forget to.
protocol CheckedBody: Decodable {
    /// - Throws: ``APIError`` `422 invalid` naming the first field out of its limits.
    func checkLimits() throws
}

extension FeedBody: CheckedBody {
    func checkLimits() throws {
        try InputLimits.checkIdentifier(self.attributesType, field: "attributesType")
        try InputLimits.checkSeconds(self.staleAfterSeconds, in: InputLimits.staleAfterSeconds, field: "staleAfterSeconds")
        try InputLimits.checkSeconds(self.staleGraceSeconds, in: InputLimits.staleGraceSeconds, field: "staleGraceSeconds")
    }
}

extension CreateChannelBody: CheckedBody {
    func checkLimits() throws {
        try InputLimits.checkIdentifier(self.feed, field: "feed")
    }
}

extension PushToStartTokenBody: CheckedBody, DeviceDetails {
    func checkLimits() throws {
        try InputLimits.checkToken(self.token, field: "token")
        try self.checkDeviceDetails()
    }
}

extension ActivityBody: CheckedBody, DeviceDetails {
    func checkLimits() throws {
        try InputLimits.checkIdentifier(self.attributesType, field: "attributesType")
        try InputLimits.checkIdentifier(self.feed, field: "feed")
        try InputLimits.checkToken(self.pushToken, field: "pushToken")
        try InputLimits.checkIdentifier(self.channelId, field: "channelId")
        try InputLimits.checkIdentifier(self.deviceId, field: "deviceId")
        try self.checkDeviceDetails()
    }
}

extension FeedStartBody: CheckedBody {
    func checkLimits() throws {
        try InputLimits.checkIdentifiers(self.audience.deviceIds, field: "audience.deviceIds")
        try InputLimits.checkIdentifiers(self.audience.userIds, field: "audience.userIds")
    }
}

extension PushToStartTokenImportRow: CheckedBody {
    func checkLimits() throws {
        try InputLimits.checkRequiredIdentifier(self.deviceId, field: "deviceId")
        try InputLimits.checkRequiredIdentifier(self.attributesType, field: "attributesType")
        try self.body.checkLimits()
    }
}

extension ActivityImportRow: CheckedBody {
    func checkLimits() throws {
        try InputLimits.checkRequiredIdentifier(self.activityId, field: "activityId")
        try self.body.checkLimits()
    }
}

/// A registration body that names the device's user, with a client key's proof of it, and the device's OS version:
/// both registrations hold these to the same limits.
protocol DeviceDetails {
    var userId: String? { get }
    var userAssertion: String? { get }
    var osVersion: String? { get }
}

extension DeviceDetails {
    /// Checks the user id, its assertion and the OS version against ``InputLimits``.
    func checkDeviceDetails() throws {
        try InputLimits.checkIdentifier(self.userId, field: "userId")
        try InputLimits.checkIdentifier(self.userAssertion, field: "userAssertion", maximumBytes: InputLimits.assertionBytes)
        try InputLimits.checkIdentifier(self.osVersion, field: "osVersion", maximumBytes: InputLimits.osVersionBytes)
    }
}
