/// The operations the Swift API and the `/emulator` control plane share.
extension EmulatorState {
    /// Adds a simulated device. See ``APNsEmulator/addDevice(bundleID:osVersion:pushToStartTokens:)``.
    func addDevice(bundleID: String, osVersion: String, pushToStartTokens: [String: String]) throws(APNsFailure) -> DeviceSnapshot {
        try self.withLock { contents throws(APNsFailure) in
            try contents.fleet.addDevice(bundleID: bundleID, osVersion: osVersion, pushToStartTokens: pushToStartTokens)
                .snapshot(now: contents.deviceNow)
        }
    }

    /// Every device as it is now.
    func devices() -> [DeviceSnapshot] {
        self.withLock { contents in
            contents.fleet.devices.map { $0.snapshot(now: contents.deviceNow) }
        }
    }

    /// One device as it is now.
    func device(id: String) -> DeviceSnapshot? {
        self.withLock { contents in
            contents.fleet.device(id: id)?.snapshot(now: contents.deviceNow)
        }
    }

    /// Rotates a push-to-start token; the old one answers 410 from now on.
    func rotatePushToStartToken(deviceID: String, attributesType: String) -> String? {
        self.withLock {
            $0.fleet.rotatePushToStartToken(deviceID: deviceID, attributesType: attributesType, nowMillis: Self.wallClockMillis)
        }
    }

    /// Rotates an activity's update token; the old one answers 410 from now on.
    func rotateUpdateToken(deviceID: String, activityID: String) -> String? {
        self.withLock {
            $0.fleet.rotateUpdateToken(deviceID: deviceID, activityID: activityID, nowMillis: Self.wallClockMillis)
        }
    }

    /// Removes an activity from its device without an end; its token keeps answering 200.
    func loseActivity(deviceID: String, activityID: String) -> Bool {
        self.withLock { $0.fleet.loseActivity(deviceID: deviceID, activityID: activityID) }
    }

    /// Moves the devices' clock forward. - Returns: the devices' time afterwards.
    func advanceClock(by seconds: Int) -> Int {
        self.withLock { contents in
            contents.clockOffset += seconds
            return contents.deviceNow
        }
    }

    /// The devices' clock, in seconds since 1970.
    var deviceNow: Int {
        self.withLock { $0.deviceNow }
    }

    /// The faults in force.
    var faults: FaultPlan {
        get { self.withLock { $0.faults } }
    }

    /// Replaces the faults in force.
    func setFaults(_ plan: FaultPlan) {
        self.withLock { $0.faults = plan }
    }

    /// Every channel, as the control plane shows them.
    func channels() -> [ChannelStore.Channel] {
        self.withLock { $0.channels.all }
    }
}
