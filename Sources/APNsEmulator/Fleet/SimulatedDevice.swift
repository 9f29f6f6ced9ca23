/// One simulated iPhone: its app, OS version, push-to-start tokens and activities.
struct SimulatedDevice {
    let id: String
    let bundleID: String
    /// The iOS version, such as `18.2`; iOS 18 and later can subscribe to broadcast channels.
    let osVersion: String
    /// Push-to-start tokens by `ActivityAttributes` type.
    var pushToStartTokens: [String: String]
    var activities: [SimulatedActivity] = []
    /// Pushes to the device's push-to-start tokens that started nothing.
    var ignoredPushes: [IgnoredPush] = []
    /// Device times of the priority-10 pushes of the last hour.
    var priority10PushTimes: [Int] = []
    /// Device times of the push-to-start notifications counted against the push-to-start budget, in its window.
    var pushToStartTimes: [Int] = []

    /// Whether the OS can start an activity subscribed to a channel (`input-push-channel`): iOS 18 or later.
    var supportsChannels: Bool {
        let major = self.osVersion.split(separator: ".").first.flatMap { Int($0) } ?? 0
        return major >= 18
    }

    /// Counts a priority-10 push against the hourly budget.
    /// - Returns: `false` when the budget was already spent (the push is then not counted).
    mutating func spendPriority10(now: Int, budget: Int?) -> Bool {
        self.priority10PushTimes.removeAll { $0 <= now - 3600 }
        if let budget, self.priority10PushTimes.count >= budget { return false }
        self.priority10PushTimes.append(now)
        return true
    }

    /// Counts a push-to-start against the device's push-to-start budget.
    /// - Returns: `false` when the budget of the window was already spent (the start is then not counted).
    mutating func spendPushToStart(now: Int, budget: APNsEmulator.PushToStartBudget?) -> Bool {
        guard let budget else { return true }
        self.pushToStartTimes.removeAll { $0 <= now - budget.window }
        if self.pushToStartTimes.count >= budget.starts { return false }
        self.pushToStartTimes.append(now)
        return true
    }
}
