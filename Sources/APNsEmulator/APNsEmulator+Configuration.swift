extension APNsEmulator {
    /// How an emulator listens and behaves.
    public struct Configuration: Sendable {
        /// The address both listeners bind to. Defaults to `127.0.0.1`.
        public var host: String
        /// The port for device pushes, broadcasts and the `/emulator` control plane; `0` picks a free one.
        /// Defaults to `0`.
        public var pushPort: Int
        /// The port for channel management; `0` picks a free one. Defaults to `0`.
        public var managementPort: Int
        /// The keys whose provider tokens are accepted. Defaults to none.
        public var trustedKeys: [TrustedKey]
        /// `sandbox` or `production`: sandbox answers carry `apns-unique-id` on device pushes, as Apple's do.
        /// Defaults to `sandbox`.
        public var environment: String
        /// `MAX_CONCURRENT_STREAMS` after a connection's first authenticated request (before it: 1).
        /// Defaults to `1000`.
        public var maximumConcurrentStreams: Int
        /// How many channels one app may have. Defaults to APNs' `10000`.
        public var channelLimit: Int
        /// How long each answer waits (requests are processed when they arrive). Defaults to ``EmulatorLatency/none``.
        public var latency: EmulatorLatency = .none
        /// Status polls a data export answers `PROCESSING` to before it succeeds. Defaults to `1`.
        public var dataExportProcessingPolls = 1
        /// Subscribers a channel needs on a day for its exported figures; below it they are `-1`, as Apple hides
        /// channels too small to keep people anonymous (Apple publishes no number). Defaults to `2`.
        public var dataExportPrivacyThreshold = 2
        /// Seconds added to the devices' clock to get the data export's "today", which a request's `endDate` must
        /// be before: a demo sets a day, so that today's pushes are exportable at once. Defaults to `0`.
        public var dataExportClockOffset = 0
        /// The data-export tokens accepted from the start (``APNsEmulator/addDataExportToken(_:)`` adds more).
        /// Defaults to none.
        public var dataExportTokens: [DataExportToken] = []
        /// Whether device pushes to tokens no simulated device holds succeed (for load tests) instead of
        /// answering `BadDeviceToken`. Defaults to `false`.
        public var acceptsUnknownTokens: Bool
        /// Priority-10 pushes a device accepts per hour before ignoring them; `nil` for no limit (Apple publishes
        /// no number). Defaults to `nil`.
        public var priority10Budget: Int?
        /// How long a started activity stays active before the simulated device ends it, in seconds, as iOS ends one
        /// after 8 hours (it then stays on the Lock Screen up to 4 more). Lower it to watch renewals in minutes.
        /// Defaults to `28800`.
        public var activityLifetime: Int
        /// The push-to-start budget of each simulated device: starts over it are ignored while APNs answers `200`,
        /// and the wire log marks them (``WireRecord/deviceDropped``); `nil` for no limit. Defaults to
        /// ``PushToStartBudget/apple``.
        public var pushToStartBudget: PushToStartBudget?
        /// Apps without the broadcast capability: their broadcasts and channel requests answer
        /// `FeatureNotEnabled`. Defaults to none.
        public var broadcastDisabledBundleIDs: Set<String>
        /// Faults to inject from the start. Defaults to none.
        public var faults: FaultPlan
        /// Whether every device push and broadcast is recorded as it arrived, with its answer (faults included), for
        /// ``APNsEmulator/wireRecords``, `GET /emulator/wire` and ``WireJudge``. Defaults to `false`, which costs
        /// nothing per request.
        public var recordsWire: Bool
        /// The host names its TLS certificate is valid for besides `localhost` and the loopback addresses. Defaults to
        /// ``appleHostNames``, for a backend that reaches the emulator under Apple's names; Livecast trusts such a
        /// certificate only on loopback, so an emulator reached over a network names itself instead.
        public var certificateHostNames: [String]

        /// Apple's APNs host names, production and sandbox.
        public static let appleHostNames = [
            "api.push.apple.com", "api.sandbox.push.apple.com",
            "api-broadcast.push.apple.com", "api-broadcast.sandbox.push.apple.com",
            "api-manage-broadcast.push.apple.com", "api-manage-broadcast.sandbox.push.apple.com",
        ]

        /// Creates a configuration with the defaults above.
        public init(
            host: String = "127.0.0.1",
            pushPort: Int = 0,
            managementPort: Int = 0,
            trustedKeys: [TrustedKey] = [],
            environment: String = "sandbox",
            maximumConcurrentStreams: Int = 1000,
            channelLimit: Int = 10_000,
            acceptsUnknownTokens: Bool = false,
            priority10Budget: Int? = nil,
            activityLifetime: Int = 8 * 3600,
            pushToStartBudget: PushToStartBudget? = .apple,
            broadcastDisabledBundleIDs: Set<String> = [],
            faults: FaultPlan = FaultPlan(),
            recordsWire: Bool = false,
            certificateHostNames: [String] = Self.appleHostNames
        ) {
            self.host = host
            self.pushPort = pushPort
            self.managementPort = managementPort
            self.trustedKeys = trustedKeys
            self.environment = environment
            self.maximumConcurrentStreams = maximumConcurrentStreams
            self.channelLimit = channelLimit
            self.acceptsUnknownTokens = acceptsUnknownTokens
            self.priority10Budget = priority10Budget
            self.activityLifetime = activityLifetime
            self.pushToStartBudget = pushToStartBudget
            self.broadcastDisabledBundleIDs = broadcastDisabledBundleIDs
            self.faults = faults
            self.recordsWire = recordsWire
            self.certificateHostNames = certificateHostNames
        }
    }
}
