public import Foundation

/// Reports a device's Live Activity tokens and activities straight to Livecast, with a publishable `client` key.
///
/// Every report is kept in a small file until Livecast acknowledges it, tried again with backoff after network
/// errors, `429` and `5xx` (never sooner than `Retry-After`), and sent again on the next launch if the app ended
/// first. An unchanged token is never sent twice. Reports of one activity go in order, one at a time; reports of
/// different activities go side by side. A refusal (a `4xx` other than `429`) is final: the report is dropped and
/// told in ``events``.
///
/// ```swift
/// let client = try LivecastClient(baseURL: URL(string: "https://livecast.example.com")!,
///                                 bundleID: "com.example.game", clientKey: "lc_…")
/// await client.register(pushToStartToken: token, for: "GameAttributes")
/// ```
///
/// One client per store directory: two clients on the same directory at once overwrite each other's file.
public actor LivecastClient {
    /// What became of each report: acknowledged, to be retried, or dropped. One reader; the newest 256 are kept for
    /// a reader that falls behind.
    public nonisolated let events: AsyncStream<LivecastEvent>
    /// The device's id in Livecast: the configuration's, else the one kept in the store directory.
    public nonisolated let deviceID: String

    private let configuration: Configuration
    private let eventSink: AsyncStream<LivecastEvent>.Continuation
    private let transport: HTTPTransport
    private let store: PendingStore
    private var state: PendingState
    /// The report in flight in each busy lane.
    private var inFlight: [LivecastReport.Lane: (sequence: Int, task: Task<Void, Never>)] = [:]
    /// Activities whose token and state sequences are being observed.
    private var observedActivities: Set<String> = []
    private var idleWaiters: [CheckedContinuation<Void, Never>] = []
    private var isShutDown = false

    /// Opens the store directory and starts sending what the last launch left pending.
    /// - Throws: When the store directory cannot be created.
    public init(configuration: Configuration) throws {
        self.configuration = configuration
        self.store = try PendingStore(directory: configuration.storeDirectory)
        var state = self.store.load(deviceID: configuration.deviceID)
        state.forgetOldActivities(now: Date())
        self.state = state
        self.deviceID = state.deviceID
        self.transport = HTTPTransport(
            baseURL: configuration.baseURL,
            bundleID: configuration.bundleID,
            clientKey: configuration.clientKey,
            requestTimeout: configuration.requestTimeout
        )
        (self.events, self.eventSink) = AsyncStream.makeStream(of: LivecastEvent.self, bufferingPolicy: .bufferingNewest(256))
        Task { await self.resume() }
    }

    /// A client with the default configuration.
    /// - Throws: When the store directory cannot be created.
    public init(baseURL: URL, bundleID: String, clientKey: String, storeDirectory: URL = LivecastClient.defaultStoreDirectory) throws {
        try self.init(configuration: Configuration(baseURL: baseURL, bundleID: bundleID, clientKey: clientKey, storeDirectory: storeDirectory))
    }

    // MARK: - Reports

    /// Reports the device's push-to-start token for an attributes type (`PUT /push-to-start-tokens/{deviceId}/{type}`),
    /// unless Livecast already has this very token.
    /// - Parameter frequentUpdatesEnabled: ActivityKit's `frequentPushesEnabled`, when known.
    public func register(pushToStartToken token: Data, for attributesType: String, frequentUpdatesEnabled: Bool? = nil) {
        self.enqueue(
            .pushToStartToken(
                attributesType: attributesType,
                token: token.hexString,
                frequentUpdatesEnabled: frequentUpdatesEnabled,
                osVersion: self.configuration.osVersion
            )
        )
    }

    /// Reports the device's push-to-start token for `type` (named `String(describing: type)`).
    public func register<Attributes>(pushToStartToken token: Data, for type: Attributes.Type, frequentUpdatesEnabled: Bool? = nil) {
        self.register(pushToStartToken: token, for: String(describing: type), frequentUpdatesEnabled: frequentUpdatesEnabled)
    }

    /// Tells Livecast to stop starting activities of a type on this device (`DELETE /push-to-start-tokens/…`).
    public func unregister(pushToStartTokenFor attributesType: String) {
        self.enqueue(.pushToStartTokenRemoval(attributesType: attributesType))
    }

    /// Reports an activity with its (new) update token (`PUT /activities/{id}`), unless Livecast already has it.
    public func register(activity: LivecastActivity, updateToken: Data) {
        self.enqueue(self.registration(of: activity, pushToken: updateToken.hexString, channelID: nil))
    }

    /// Reports an activity subscribed to a broadcast channel (iOS 18+), unless Livecast already has it.
    public func register(activity: LivecastActivity, channelID: String) {
        self.enqueue(self.registration(of: activity, pushToken: nil, channelID: channelID))
    }

    /// Reports an activity before its update token arrives, so Livecast knows it follows its feed.
    public func register(activity: LivecastActivity) {
        self.enqueue(self.registration(of: activity, pushToken: nil, channelID: nil))
    }

    /// Reports that the activity ended on the device (`DELETE /activities/{id}`): Livecast sends it nothing more.
    public func activityEnded(_ activityID: String) {
        self.enqueue(.activityEnded(id: activityID))
    }

    /// Reports that the activity left the Lock Screen (`POST /activities/{id}/dismissed`).
    public func activityDismissed(_ activityID: String) {
        self.enqueue(.activityDismissed(id: activityID))
    }

    /// Unregisters the whole device (`DELETE /devices/{deviceId}`), after the reports already in flight. The
    /// reports still waiting are dropped: the unregistration makes them moot. Later reports go after it.
    public func unregisterDevice() {
        let inFlight = Set(self.inFlight.values.map(\.sequence))
        for report in self.state.dropAll(except: inFlight) {
            self.emit(.dropped, report, message: "the device is being unregistered")
        }
        self.enqueue(.deviceUnregistration)
    }

    /// Reports a change of ActivityKit's `frequentPushesEnabled`: every push-to-start token Livecast has (or will
    /// have) is registered again with it.
    public func setFrequentUpdatesEnabled(_ enabled: Bool) {
        let subjects = Set(self.state.acknowledged.keys).union(self.state.pending.map(\.report.subject))
        for subject in subjects.sorted() {
            guard case .pushToStartToken(let type, let token, _, let osVersion) = self.state.latest(of: subject) else { continue }
            self.enqueue(.pushToStartToken(attributesType: type, token: token, frequentUpdatesEnabled: enabled, osVersion: osVersion))
        }
    }

    // MARK: - State

    /// The reports not yet acknowledged, in the order they were made.
    public var pendingReports: [LivecastReport] { self.state.pending.map(\.report) }

    /// Returns once no report is pending (each acknowledged or dropped), or the client is shut down.
    public func waitUntilIdle() async {
        guard !self.state.pending.isEmpty, !self.isShutDown else { return }
        await withCheckedContinuation { self.idleWaiters.append($0) }
    }

    /// Starts sending the pending reports; done by `init`, and harmless to call again (after the app comes back to
    /// the foreground, say).
    public func resume() {
        self.startReports()
    }

    /// Stops sending: the reports in flight are cancelled and everything pending stays in the store for the next
    /// client. Ends ``events``.
    public func shutdown() async {
        self.isShutDown = true
        let tasks = self.inFlight.values.map(\.task)
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        self.inFlight = [:]
        self.eventSink.finish()
        self.resumeIdleWaiters()
    }

    // MARK: - Observation support

    /// Claims the observation of an activity. - Returns: `false` when it is already observed.
    func claimObservation(of activityID: String) -> Bool {
        self.observedActivities.insert(activityID).inserted
    }

    // MARK: - Sending

    private func registration(of activity: LivecastActivity, pushToken: String?, channelID: String?) -> LivecastReport.Content {
        .activity(
            id: activity.id,
            attributesType: activity.attributesType,
            feed: activity.feed,
            pushToken: pushToken,
            channelID: channelID,
            osVersion: self.configuration.osVersion
        )
    }

    private func enqueue(_ content: LivecastReport.Content) {
        guard self.state.enqueue(LivecastReport(content), now: Date()) else { return }
        self.persist()
        self.startReports()
    }

    /// Starts the reports the schedule allows now.
    private func startReports() {
        guard !self.isShutDown else { return }
        for item in ReportSchedule.startable(self.state.pending, busy: Set(self.inFlight.keys)) {
            self.inFlight[item.report.lane] = (item.sequence, Task { await self.deliver(item) })
        }
    }

    /// Tries a report until it is acknowledged, refused or too old, or the client shuts down.
    private func deliver(_ item: PendingState.Pending) async {
        let policy = self.configuration.retryPolicy
        var failures = 0
        while !Task.isCancelled {
            if Date().timeIntervalSince(item.madeAt) > policy.reportLifetime.timeInterval {
                return self.finish(
                    item,
                    acknowledged: false,
                    event: .dropped,
                    status: nil,
                    message: "undelivered for longer than \(policy.reportLifetime)"
                )
            }
            let answer = await self.transport.send(ReportRequest(item.report, deviceID: self.deviceID), deviceID: self.deviceID)
            guard !Task.isCancelled else { return }
            switch RetryPolicy.verdict(for: answer, of: item.report) {
            case .delivered(let status):
                return self.finish(item, acknowledged: true, event: .delivered, status: status)
            case .refused(let status, let code, let message):
                return self.finish(item, acknowledged: false, event: .dropped, status: status, code: code, message: message)
            case .retry(let retryAfter, let status, let message):
                failures += 1
                let delay = policy.delay(afterFailures: failures, retryAfter: retryAfter)
                self.emit(.retrying, item.report, status: status, message: message, retryDelay: delay)
                try? await Task.sleep(for: delay)
            }
        }
    }

    private func finish(
        _ item: PendingState.Pending,
        acknowledged: Bool,
        event: LivecastEvent.Kind,
        status: Int?,
        code: String? = nil,
        message: String? = nil
    ) {
        self.state.finish(sequence: item.sequence, acknowledged: acknowledged, now: Date())
        self.persist()
        if self.inFlight[item.report.lane]?.sequence == item.sequence { self.inFlight[item.report.lane] = nil }
        self.emit(event, item.report, status: status, code: code, message: message)
        self.startReports()
        if self.state.pending.isEmpty { self.resumeIdleWaiters() }
    }

    private func emit(
        _ kind: LivecastEvent.Kind,
        _ report: LivecastReport,
        status: Int? = nil,
        code: String? = nil,
        message: String? = nil,
        retryDelay: Duration? = nil
    ) {
        self.eventSink.yield(LivecastEvent(kind: kind, report: report, status: status, errorCode: code, message: message, retryDelay: retryDelay))
    }

    private func resumeIdleWaiters() {
        let waiters = self.idleWaiters
        self.idleWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    /// Writes the state; when the file cannot be written, reports still go out, but do not outlive the app.
    private func persist() {
        try? self.store.save(self.state)
    }
}

extension Data {
    /// Lowercase hex, as Livecast and APNs take device tokens.
    var hexString: String {
        self.map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
        }.joined()
    }
}

extension Duration {
    /// In seconds, as a `TimeInterval`.
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = self.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
