public import Foundation

/// Reports a device's Live Activity tokens and activities straight to Livecast, with a publishable `client` key.
///
/// Every report is kept in a small file until Livecast acknowledges it, tried again with backoff after network
/// errors, `429` and `5xx` (never sooner than `Retry-After`), and sent again on the next launch if the app ended
/// first. An unchanged token is not sent twice, except once every ``Configuration/reReportInterval`` (7 days) so
/// that Livecast keeps it. Reports of one activity go in order, one at a time; reports of different activities go
/// side by side. A report is given up only for an answer that can never succeed (a revoked key, a token Livecast
/// keeps for another device…), and ``events`` says why (``LivecastEvent/DropReason``); one that can succeed once
/// something changes waits (``LivecastEvent/Kind/held``). While a report is being sent, the app holds a background
/// task on iOS, so the few seconds of a push-to-start's wake suffice to report the new activity.
///
/// ```swift
/// let client = try LivecastClient(baseURL: URL(string: "https://livecast.example.com")!,
///                                 bundleID: "com.example.game", clientKey: "lc_…")
/// await client.register(pushToStartToken: token, for: "GameAttributes")
/// ```
///
/// One client per store directory: two clients on the same directory at once overwrite each other's file.
public actor LivecastClient {
    /// What became of each report: acknowledged, to be retried, or dropped; and the client's own troubles. One
    /// reader; the newest 256 are kept for a reader that falls behind.
    public nonisolated let events: AsyncStream<LivecastEvent>

    /// The device's id in Livecast (`Livecast-Device-ID`): the configuration's, else the one kept in the store
    /// directory, made at the first launch. A backend may put it in a user assertion's `deviceId` claim.
    ///
    /// `nil` only while the store file exists but cannot be read (``LivecastEvent/Kind/storeUnreadable``) and no
    /// id is configured: the kept id is not replaced by a new one behind the app's back.
    public nonisolated var deviceID: String? { self.currentDeviceID.value }

    let configuration: Configuration
    let eventSink: AsyncStream<LivecastEvent>.Continuation
    let transport: HTTPTransport
    let store: PendingStore
    var state: PendingState
    /// Why the store file cannot be read, while it cannot: reports then wait in memory and nothing is sent.
    var unreadableStore: String?
    let currentDeviceID: DeviceIDBox
    /// ActivityKit's `frequentPushesEnabled` as last told; push-to-start registrations carry it.
    var frequentUpdatesEnabled: Bool?
    /// Whom the app said registrations are bound to in this launch, and how to prove it (in memory only).
    var identity = IdentityState.unknown
    /// When a push-to-start registration bound to the remembered user stops waiting for the app to say who the user
    /// is (``Configuration/identifyGracePeriod`` after launch).
    let identityDeadline: ContinuousClock.Instant
    /// Whether the wait for the app's word on the user was told in ``events`` (once a launch).
    var toldIdentityWait = false
    /// The report in flight in each busy lane.
    var inFlight: [LivecastReport.Lane: (sequence: Int, task: Task<Void, Never>)] = [:]
    /// The reports waiting out a backoff, by sequence: ``resume()`` wakes them.
    var sleepers: [Int: Sleeper] = [:]
    /// Activities whose token and state sequences are being observed.
    var observedActivities: Set<String> = []
    /// Activities the app scheduled that have not started yet (iOS 26 `.pending`): registered with `pending`.
    var pendingActivities: Set<String> = []
    /// Activities this client ended on the device for a renewal: their dismissal is not the user's.
    var retiredActivities: Set<String> = []
    /// Who waits for Livecast to acknowledge an activity's update token or channel (``waitUntilAddressable(_:)``).
    var addressWaiters: [String: [UUID: CheckedContinuation<Bool, Never>]] = [:]
    /// What ``resume()`` reads again, as the adapter gave it: values whose update sequences can stay silent.
    var resumeReaders: [UUID: @Sendable () async -> Void] = [:]
    var idleWaiters: [UUID: CheckedContinuation<Void, Never>] = [:]
    var isShutDown = false

    /// Opens the store directory and starts sending what the last launch left pending, and what is due again.
    /// - Throws: When the store directory cannot be created, or ``Configuration/reReportInterval`` is not between
    ///   zero and 30 days (``ConfigurationError``).
    public init(configuration: Configuration) throws {
        guard configuration.reReportInterval > .zero, configuration.reReportInterval < Configuration.maximumReReportInterval else {
            throw ConfigurationError(
                description:
                    "reReportInterval must be above zero and below 30 days, well inside Livecast's token expiry: \(configuration.reReportInterval)"
            )
        }
        self.configuration = configuration
        self.identityDeadline = ContinuousClock.now + configuration.identifyGracePeriod
        self.store = try PendingStore(directory: configuration.storeDirectory)
        (self.events, self.eventSink) = AsyncStream.makeStream(of: LivecastEvent.self, bufferingPolicy: .bufferingNewest(256))
        switch self.store.load(deviceID: configuration.deviceID) {
        case .kept(let state), .new(let state):
            self.state = state
            self.currentDeviceID = DeviceIDBox(state.deviceID)
            try? self.store.save(state)
        case .unreadable(let reason):
            self.state = PendingState(deviceID: configuration.deviceID ?? "")
            self.unreadableStore = reason
            self.currentDeviceID = DeviceIDBox(configuration.deviceID)
            self.eventSink.yield(LivecastEvent(kind: .storeUnreadable, report: nil, message: reason))
        }
        self.transport = HTTPTransport(
            baseURL: configuration.baseURL,
            bundleID: configuration.bundleID,
            clientKey: configuration.clientKey,
            requestTimeout: configuration.requestTimeout,
            protocolClasses: configuration.urlProtocols.classes
        )
        Task { await self.resume() }
    }

    /// A client with the default configuration.
    /// - Throws: When the store directory cannot be created.
    public init(baseURL: URL, bundleID: String, clientKey: String, storeDirectory: URL = LivecastClient.defaultStoreDirectory) throws {
        try self.init(configuration: Configuration(baseURL: baseURL, bundleID: bundleID, clientKey: clientKey, storeDirectory: storeDirectory))
    }

    // MARK: - Reports

    /// Reports the device's push-to-start token for an attributes type (`PUT /push-to-start-tokens/{deviceId}/{type}`),
    /// unless Livecast already has this very token (and got it less than ``Configuration/reReportInterval`` ago).
    /// - Parameter frequentUpdatesEnabled: ActivityKit's `frequentPushesEnabled`; `nil`: the last value given here or
    ///   to ``setFrequentUpdatesEnabled(_:)``, if any.
    public func register(pushToStartToken token: Data, for attributesType: String, frequentUpdatesEnabled: Bool? = nil) {
        if let frequentUpdatesEnabled { self.frequentUpdatesEnabled = frequentUpdatesEnabled }
        self.enqueue(
            .pushToStartToken(
                attributesType: attributesType,
                token: token.hexString,
                frequentUpdatesEnabled: self.frequentUpdatesEnabled,
                osVersion: self.configuration.osVersion,
                userID: self.currentUserID
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

    /// Reports that the activity left the Lock Screen (`POST /activities/{id}/dismissed`): the user dismissed it,
    /// so Livecast neither renews it nor starts its feed on this device again.
    public func activityDismissed(_ activityID: String) {
        self.enqueue(.activityDismissed(id: activityID))
    }

    /// Unregisters the whole device (`DELETE /devices/{deviceId}`), after the reports already in flight. The
    /// reports still waiting (held ones included) are dropped: the unregistration makes them moot. Later reports go
    /// after it.
    public func unregisterDevice() {
        let held = Set(self.sleepers.filter(\.value.isHeld).keys)
        let inFlight = Set(self.inFlight.values.map(\.sequence)).subtracting(held)
        for report in self.state.dropAll(except: inFlight) {
            self.emit(.dropped, report, message: "the device is being unregistered", dropReason: .deviceUnregistered)
        }
        self.wakeHeld()
        self.enqueue(.deviceUnregistration)
    }

    /// Reports a change of ActivityKit's `frequentPushesEnabled`: every push-to-start token Livecast has (or will
    /// have) is registered again with it, and so is every later one.
    public func setFrequentUpdatesEnabled(_ enabled: Bool) {
        self.frequentUpdatesEnabled = enabled
        for content in self.state.liveRegistrations {
            guard case .pushToStartToken(let type, let token, _, let osVersion, _) = content else { continue }
            self.enqueue(
                .pushToStartToken(
                    attributesType: type,
                    token: token,
                    frequentUpdatesEnabled: enabled,
                    osVersion: osVersion,
                    userID: self.currentUserID
                )
            )
        }
    }

    /// Reconciles what this client reported of an attributes type's activities with what ActivityKit shows now,
    /// for what happened while the app was not running: an activity reported and not since reported over that is
    /// absent from `running` (gone from the Lock Screen) or `.dismissed` there is reported dismissed
    /// (`POST /activities/{id}/dismissed`), one `.ended` there is reported ended (`DELETE /activities/{id}`).
    /// ``Livecast/observe(_:client:feed:channelID:)`` calls it at launch.
    /// - Parameter running: ActivityKit's `Activity<A>.activities`: each one's id and state.
    public func reconcile(attributesType: String, running: [String: LivecastActivityState]) {
        self.reconcile(attributesType: attributesType, running: running, feedsShown: [])
    }

    /// ``reconcile(attributesType:running:)``, knowing the feeds of the activities shown: an activity gone while
    /// another of its feed is shown was replaced by a renewal (its end came with a past dismissal date), not
    /// dismissed by the user, so it is reported ended.
    func reconcile(attributesType: String, running: [String: LivecastActivityState], feedsShown: Set<String>) {
        for id in self.state.knownActivities(attributesType: attributesType) {
            switch running[id] {
            case nil:
                if let feed = self.state.latest(of: LivecastReport.subject(ofActivity: id))?.feed, feedsShown.contains(feed) {
                    self.activityEnded(id)
                } else {
                    self.activityDismissed(id)
                }
            case .dismissed: self.activityDismissed(id)
            case .ended: self.activityEnded(id)
            case .active, .stale, .pending: continue
            }
        }
    }

    // MARK: - State

    /// The reports not yet acknowledged, in the order they were made.
    public var pendingReports: [LivecastReport] { self.state.pending.map(\.report) }

    /// Returns once no report is pending (each acknowledged or dropped), the client is shut down, or the calling task
    /// is cancelled.
    public func waitUntilIdle() async {
        guard !self.state.pending.isEmpty, !self.isShutDown else { return }
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                self.idleWaiters[id] = continuation
                if Task.isCancelled { self.resumeIdleWaiter(id) }
            }
        } onCancel: {
            Task { await self.resumeIdleWaiter(id) }
        }
    }

    /// Call it when the app becomes active. Tries the store file again if it could not be read, queues the live
    /// registrations that are due again (``Configuration/reReportInterval``), and retries what waits out a backoff
    /// now, but never sooner than a `Retry-After` Livecast gave. With ``Livecast/observe(_:client:feed:channelID:)``,
    /// it also reads ActivityKit's push-to-start token and `frequentPushesEnabled` again, whose update sequences can
    /// stay silent on a device. Done by `init` too.
    public func resume() {
        self.reopenStoreIfUnreadable()
        self.queueDueReReports()
        self.startReports()
        self.wakeSleepers()
        for read in self.resumeReaders.values {
            Task { await read() }
        }
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
        self.resumeAddressWaiters()
    }

    /// Gives up on a store file that cannot be read (``LivecastEvent/Kind/storeUnreadable``): moves it aside as
    /// `livecast-kit.unreadable.json`, starts afresh with a new device id (or the configured one), and sends the
    /// reports kept in memory since launch. Does nothing when the file is readable. What the old file held (its
    /// device id, its pending reports) is lost to this client: call it only when the file is known to be damaged,
    /// not merely locked (before the first unlock after a restart, a protected file cannot be read).
    public func discardUnreadableStore() {
        guard self.unreadableStore != nil else { return }
        self.reopenStoreIfUnreadable()
        guard self.unreadableStore != nil else { return }
        try? self.store.moveAside()
        self.adopt(PendingState(deviceID: self.configuration.deviceID ?? UUID().uuidString.lowercased()))
        self.resume()
    }

    // MARK: - Observation support

    /// Claims the observation of an activity. - Returns: `false` when it is already observed.
    func claimObservation(of activityID: String) -> Bool {
        self.observedActivities.insert(activityID).inserted
    }

    /// Ends the observation of an activity, once its sequences are done with.
    func releaseObservation(of activityID: String) {
        self.observedActivities.remove(activityID)
    }

    /// Stores the setting without registering anything again (the adapter's first reading, before any token).
    func noteFrequentUpdatesEnabled(_ enabled: Bool) {
        self.frequentUpdatesEnabled = enabled
    }

    /// The activities of an attributes type this client reported and not since reported over.
    func reportedActivities(attributesType: String) -> [String] {
        self.state.knownActivities(attributesType: attributesType)
    }

    /// The ids of the activities observed now (for the tests: none is left once its activity is over).
    var observedActivityIDs: Set<String> { self.observedActivities }

    /// Adds a value ``resume()`` reads again. - Returns: Its key, for ``removeResumeReader(_:)``.
    func addResumeReader(_ read: @escaping @Sendable () async -> Void) -> UUID {
        let key = UUID()
        self.resumeReaders[key] = read
        return key
    }

    /// Stops reading a value at ``resume()``, when its observation ends.
    func removeResumeReader(_ key: UUID) {
        self.resumeReaders[key] = nil
    }

    // MARK: - Queueing

    private func registration(of activity: LivecastActivity, pushToken: String?, channelID: String?) -> LivecastReport.Content {
        .activity(
            id: activity.id,
            attributesType: activity.attributesType,
            feed: activity.feed,
            pushToken: pushToken,
            channelID: channelID,
            osVersion: self.configuration.osVersion,
            userID: self.currentUserID,
            pending: self.pendingActivities.contains(activity.id) ? true : nil
        )
    }

    /// Queues a report unless it says nothing new, then whatever else is due again, and starts what may go.
    func enqueue(_ content: LivecastReport.Content) {
        self.reopenStoreIfUnreadable()
        let report = LivecastReport(content)
        let queued = self.state.enqueue(report, now: self.configuration.now(), reReportInterval: self.reReportInterval)
        self.queueDueReReports()
        if queued {
            self.persist()
            self.startReports()
            self.wakeHeld(lane: report.lane)
            if report.endsActivity, let id = report.activityID { self.resumeAddressWaiters(of: id, addressable: false) }
        }
    }

    /// Queues again every live registration Livecast acknowledged at least ``Configuration/reReportInterval`` ago,
    /// and forgets old activities.
    func queueDueReReports() {
        let now = self.configuration.now()
        self.state.forgetOldActivities(now: now)
        let due = self.state.dueReReports(now: now, interval: self.reReportInterval)
        for content in due {
            _ = self.state.enqueue(LivecastReport(content), now: now, reReportInterval: self.reReportInterval)
        }
        if !due.isEmpty {
            self.persist()
            self.startReports()
        }
    }

    private var reReportInterval: TimeInterval { self.configuration.reReportInterval.timeInterval }
}

/// The device id, readable from any thread: it changes only once, when an unreadable store file becomes readable.
final class DeviceIDBox: @unchecked Sendable {
    // @unchecked: `stored` is read and written under `lock`.
    private let lock = NSLock()
    private var stored: String?

    init(_ value: String?) { self.stored = value }

    var value: String? {
        get { self.lock.withLock { self.stored } }
        set { self.lock.withLock { self.stored = newValue } }
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
