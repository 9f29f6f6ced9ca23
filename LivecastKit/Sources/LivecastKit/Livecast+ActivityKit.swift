#if os(iOS) && !targetEnvironment(macCatalyst) && canImport(ActivityKit)
public import ActivityKit
#elseif os(Linux)
// Linux: ActivityKit's API as Apple documents it, so that the adapter is compiled and tested on Linux too.
public import ActivityKitStandIn
#endif

#if (os(iOS) && !targetEnvironment(macCatalyst) && canImport(ActivityKit)) || os(Linux)
import Foundation

// Compiled against ActivityKit on iOS and iPadOS, and against its stand-in on Linux; left out on Mac Catalyst, macOS
// and elsewhere, where ActivityKit does not run an app's Live Activities. It uses only ActivityKit's documented API:
// `Activity<A>.pushToStartToken` and `pushToStartTokenUpdates` (iOS 17.2), `activities`, `activityUpdates`, and each
// activity's `id`, `attributes`, `activityState` (`.pending` from iOS 26), `pushToken`, `pushTokenUpdates`,
// `activityStateUpdates` and `end(_:dismissalPolicy:)`, and `ActivityAuthorizationInfo`'s `frequentPushesEnabled`
// and `frequentPushEnablementUpdates`. An `Activity` never crosses tasks: each task looks its activity up by id.

#if compiler(>=6.2)
/// The attributes types ``Livecast/observe(_:client:feed:channelID:)`` takes: ActivityKit's, usable from any task
/// (Swift 6.2's `SendableMetatype`: not bound to the main actor by an isolated conformance). Declare the type
/// `nonisolated` in a module that is main-actor by default.
public typealias ObservableActivityAttributes = ActivityAttributes & SendableMetatype
#else
/// The attributes types ``Livecast/observe(_:client:feed:channelID:)`` takes: ActivityKit's.
public typealias ObservableActivityAttributes = ActivityAttributes
#endif

/// The one call an app makes at launch: ``Livecast/observe(_:client:feed:channelID:)``.
public enum Livecast {
    /// Reports everything ActivityKit tells the app about activities of type `Attributes` to Livecast through
    /// `client`, for as long as the app runs: the push-to-start token and each of its rotations (iOS 17.2+), every
    /// activity (those running at launch, and each one started later, by the app or by a push; one the app scheduled
    /// for later as pending, iOS 26), its update tokens, its end and its dismissal, and changes of the
    /// frequent-updates setting. At launch it first reports what happened while the app was not running: an activity
    /// the client reported that ActivityKit no longer shows, or shows ended or dismissed
    /// (``LivecastClient/reconcile(attributesType:running:)``). At launch and at every ``LivecastClient/resume()``,
    /// it also reads the push-to-start token and `frequentPushesEnabled` themselves: their update sequences can stay
    /// silent on a device.
    ///
    /// **Renewal.** When a newer activity of a feed appears (Livecast renews an activity before Apple's 8 hours by a
    /// push-to-start), it ends the older ones of the same feed on the device, with an immediate dismissal, once it has
    /// reported the new one: a channel-based one (or one without an update token) at once, since Livecast cannot end it
    /// without ending the new one on the same channel; a token-based one once Livecast acknowledged the new one's
    /// update token (Livecast ends it by push too). Their end is reported as an end, never as the user's dismissal.
    ///
    /// Call it once per attributes type, early at launch (in `application(_:didFinishLaunchingWithOptions:)` or the
    /// `App`'s `init`), so that an activity started by a push while the app was not running is reported when the
    /// system wakes the app. Nothing is sent before it (or a `register` call) is made: call it once the user agreed.
    /// - Parameters:
    ///   - feed: The key of the feed an activity follows, read from its attributes (`nil`: none). Activities with the
    ///     same key are one feed's, for renewals.
    ///   - channelID: The broadcast channel an activity subscribed to, read from its attributes, for channel-based
    ///     activities (iOS 18+); ActivityKit does not tell it, so the app must (`nil`: token-based).
    /// - Returns: The observing task; cancel it to stop.
    @available(iOS 16.2, *)
    @discardableResult
    public static func observe<Attributes: ObservableActivityAttributes>(
        _ type: Attributes.Type,
        client: LivecastClient,
        feed: @escaping @Sendable (Attributes) -> String? = { _ in nil },
        channelID: @escaping @Sendable (Attributes) -> String? = { _ in nil }
    ) -> Task<Void, Never> {
        let attributesType = String(describing: type)
        return Task {
            let read: @Sendable () async -> Void = { await Self.readCurrentValues(Attributes.self, attributesType: attributesType, client: client) }
            await client.noteFrequentUpdatesEnabled(ActivityAuthorizationInfo().frequentPushesEnabled)
            await client.reconcile(
                attributesType: attributesType,
                running: Self.running(Attributes.self),
                feedsShown: Self.feedsRunning(Attributes.self, feed: feed)
            )
            let reader = await client.addResumeReader(read)
            await read()
            await withTaskGroup(of: Void.self) { group in
                if #available(iOS 17.2, *) {
                    group.addTask {
                        await client.observe(pushToStartTokens: Activity<Attributes>.pushToStartTokenUpdates, attributesType: attributesType)
                    }
                }
                group.addTask {
                    let authorization = ActivityAuthorizationInfo()
                    let changes = authorization.frequentPushEnablementUpdates
                    await client.setFrequentUpdatesEnabled(authorization.frequentPushesEnabled)
                    for await enabled in changes {
                        await client.setFrequentUpdatesEnabled(enabled)
                    }
                }
                group.addTask {
                    await withTaskGroup(of: Void.self) { activities in
                        let started = Activity<Attributes>.activityUpdates
                        let observer = Observer(attributesType: attributesType, client: client, feed: feed, channelID: channelID)
                        // At launch, one the client never reported beside ones it did, of the same feed, is their
                        // renewal (started while the app was not running).
                        let reported = Set(await client.reportedActivities(attributesType: attributesType))
                        let atLaunch = Activity<Attributes>.activities
                        for activity in atLaunch {
                            let older =
                                reported.contains(activity.id)
                                ? [] : Self.older(than: activity, among: atLaunch.filter { reported.contains($0.id) }, feed: feed)
                            await observer.follow(activity.id, replacing: older, in: &activities)
                        }
                        for await activity in started {
                            let older = Self.older(than: activity, among: Activity<Attributes>.activities, feed: feed)
                            await observer.follow(activity.id, replacing: older, in: &activities)
                        }
                    }
                }
            }
            await client.removeResumeReader(reader)
        }
    }

    /// Reads what ActivityKit's update sequences may not tell: the frequent-updates setting and the push-to-start
    /// token (iOS 17.2+), and reports them when they changed.
    @available(iOS 16.2, *)
    private static func readCurrentValues<Attributes: ObservableActivityAttributes>(
        _ type: Attributes.Type,
        attributesType: String,
        client: LivecastClient
    ) async {
        let frequentUpdatesEnabled = ActivityAuthorizationInfo().frequentPushesEnabled
        if #available(iOS 17.2, *), let token = Activity<Attributes>.pushToStartToken {
            await client.register(pushToStartToken: token, for: attributesType, frequentUpdatesEnabled: frequentUpdatesEnabled)
        }
        await client.setFrequentUpdatesEnabled(frequentUpdatesEnabled)
    }

    /// The activities ActivityKit shows now, by id, with their states.
    @available(iOS 16.2, *)
    private static func running<Attributes: ObservableActivityAttributes>(_ type: Attributes.Type) -> [String: LivecastActivityState] {
        var running: [String: LivecastActivityState] = [:]
        for activity in Activity<Attributes>.activities {
            running[activity.id] = Self.state(activity.activityState) ?? .active
        }
        return running
    }

    /// The feeds of the activities running now (not ended).
    @available(iOS 16.2, *)
    private static func feedsRunning<Attributes: ObservableActivityAttributes>(
        _ type: Attributes.Type,
        feed: (Attributes) -> String?
    ) -> Set<String> {
        Set(Activity<Attributes>.activities.filter { Self.isRunning($0.activityState) }.compactMap { feed($0.attributes) })
    }

    /// The ids of the activities among `others` that `activity` renews: those of its feed, still on the device. None
    /// for an activity without a feed, or one that is pending or over.
    @available(iOS 16.2, *)
    private static func older<Attributes: ObservableActivityAttributes>(
        than activity: Activity<Attributes>,
        among others: [Activity<Attributes>],
        feed: (Attributes) -> String?
    ) -> [String] {
        guard Self.isRunning(activity.activityState), Self.state(activity.activityState) != .pending, let key = feed(activity.attributes) else {
            return []
        }
        return others.filter { other in
            guard other.id != activity.id, feed(other.attributes) == key, let state = Self.state(other.activityState) else { return false }
            return state == .active || state == .stale || state == .ended
        }.map(\.id)
    }

    /// Whether an activity runs (pending, active or stale), rather than ended or dismissed.
    @available(iOS 16.2, *)
    private static func isRunning(_ state: ActivityState) -> Bool {
        switch Self.state(state) {
        case .pending, .active, .stale: true
        case .ended, .dismissed, nil: false
        }
    }

    /// Follows the activities of one attributes type for one ``observe(_:client:feed:channelID:)``.
    @available(iOS 16.2, *)
    private struct Observer<Attributes: ObservableActivityAttributes>: Sendable {
        let attributesType: String
        let client: LivecastClient
        let feed: @Sendable (Attributes) -> String?
        let channelID: @Sendable (Attributes) -> String?

        /// Starts following one activity (once): reports it (pending, if the app scheduled it for later), then its
        /// update tokens until it ends, its end and its dismissal; the observation ends with the activity. When it
        /// renews `older` activities of its feed, it ends them (``retire(_:renewedBy:)``).
        func follow(_ activityID: String, replacing older: [String], in group: inout TaskGroup<Void>) async {
            guard await self.client.claimObservation(of: activityID) else { return }
            group.addTask {
                await self.client.follow(
                    activityID,
                    updateTokens: {
                        guard let activity = Livecast.activity(Attributes.self, id: activityID) else { return }
                        let updates = activity.pushTokenUpdates
                        let reported = LivecastActivity(id: activityID, attributesType: self.attributesType, feed: self.feed(activity.attributes))
                        if Livecast.state(activity.activityState) == .pending { await self.client.setPending(activityID, true) }
                        if let channel = self.channelID(activity.attributes) {
                            await self.client.register(activity: reported, channelID: channel)
                        } else if let token = activity.pushToken {
                            await self.client.register(activity: reported, updateToken: token)
                        } else {
                            await self.client.register(activity: reported)
                        }
                        await withTaskGroup(of: Void.self) { renewal in
                            if !older.isEmpty { renewal.addTask { await self.retire(older, renewedBy: activityID) } }
                            await self.client.observeUpdateTokens(of: reported, updates)
                            renewal.cancelAll()
                        }
                    },
                    states: { report in
                        guard let activity = Livecast.activity(Attributes.self, id: activityID) else { return }
                        let updates = activity.activityStateUpdates
                        if let now = Livecast.state(activity.activityState) {
                            guard await report(now) else { return }
                        }
                        for await state in updates {
                            guard let state = Livecast.state(state) else { continue }
                            guard await report(state) else { return }
                        }
                    }
                )
            }
        }

        /// Ends the activities a renewal replaced, on the device, with an immediate dismissal, and reports their end
        /// (never a dismissal): one Livecast cannot end on its own (channel-based, or without an update token) at once;
        /// a token-based one once Livecast acknowledged the new activity's token or channel, so that the user is
        /// never left without one Livecast can update.
        func retire(_ older: [String], renewedBy newID: String) async {
            var waitForNew: [String] = []
            for id in older {
                guard let old = Livecast.activity(Attributes.self, id: id) else { continue }
                if self.channelID(old.attributes) != nil || old.pushToken == nil {
                    await self.end(old)
                } else {
                    waitForNew.append(id)
                }
            }
            guard !waitForNew.isEmpty, await self.client.waitUntilAddressable(newID) else { return }
            for id in waitForNew {
                guard let old = Livecast.activity(Attributes.self, id: id) else { continue }
                await self.end(old)
            }
        }

        private func end(_ activity: Activity<Attributes>) async {
            await self.client.retire(activity.id)
            await activity.end(nil, dismissalPolicy: .immediate)
        }
    }

    /// The activity of that id, while ActivityKit shows it.
    @available(iOS 16.2, *)
    fileprivate static func activity<Attributes: ObservableActivityAttributes>(_ type: Attributes.Type, id: String) -> Activity<Attributes>? {
        Activity<Attributes>.activities.first { $0.id == id }
    }

    /// ActivityKit's state as LivecastKit's; `nil` for a state it does not know (a newer SDK's).
    @available(iOS 16.2, *)
    fileprivate static func state(_ state: ActivityState) -> LivecastActivityState? {
        switch state {
        case .active: .active
        case .ended: .ended
        case .dismissed: .dismissed
        case .stale: .stale
        // `.pending` is iOS 26's (Xcode 26, Swift 6.2); a pattern of it needs no availability check.
        #if compiler(>=6.2) || os(Linux)
        case .pending: .pending
        #endif
        #if canImport(ActivityKit)
        @unknown default: nil
        #endif
        }
    }
}
#endif
