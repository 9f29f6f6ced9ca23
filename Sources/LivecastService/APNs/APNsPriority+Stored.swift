import APNs

extension APNsPriority {
    /// The priority an update was stored with (`updates.priority`: 10 or 5, the budget applied at acceptance);
    /// ``APNsPriority/consideringDevicePower`` for any other value.
    init(stored: Int) {
        self = APNsPriority(rawValue: stored) ?? .consideringDevicePower
    }
}
