extension APNsEmulator {
    /// The push-to-start notifications a simulated device takes in a rolling window before it ignores the rest.
    ///
    /// Apple's engineers describe a fixed on-device budget of about ten starts "in a short time frame", which cannot be
    /// raised; over it, APNs still answers `200` and the device logs "Push-to-start budget exceeded": the server never
    /// learns of the loss (APNS-REFERENCE §3.3). Apple publishes neither number exactly, so both are settable.
    public struct PushToStartBudget: Sendable, Hashable, Codable {
        /// Starts a device takes in one window.
        public var starts: Int
        /// The rolling window, in seconds.
        public var window: Int

        /// Creates a budget.
        /// - Parameters:
        ///   - starts: Starts a device takes in one window.
        ///   - window: The rolling window, in seconds.
        public init(starts: Int, window: Int) {
            self.starts = starts
            self.window = window
        }

        /// Ten starts an hour: Apple's "about ten", over a window long enough to hold any "short time frame".
        public static let apple = PushToStartBudget(starts: 10, window: 3600)
    }
}
