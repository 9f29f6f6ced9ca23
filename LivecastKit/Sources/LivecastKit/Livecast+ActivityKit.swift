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
// `Activity<A>.pushToStartToken` and `pushToStartTokenUpdates` (iOS 17.2), `activities`, `activityUpdates`, and
// each activity's `id`, `attributes`, `activityState`, `pushToken`, `pushTokenUpdates` and `activityStateUpdates`,
// and `ActivityAuthorizationInfo`'s `frequentPushesEnabled` and `frequentPushEnablementUpdates`. An `Activity` never
// crosses tasks: each task looks its activity up by id.

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
    /// activity (those running at launch, and each one started later, by the app or by a push), its update tokens,
    /// its end and its dismissal, and changes of the frequent-updates setting. At launch it first reports what
    /// happened while the app was not running: an activity the client reported that ActivityKit no longer shows,
    /// or shows ended or dismissed (``LivecastClient/reconcile(attributesType:running:)``). At launch and at every
    /// ``LivecastClient/resume()``, it also reads the push-to-start token and `frequentPushesEnabled` themselves:
    /// their update sequences can stay silent on a device.
    ///
    /// Call it once per attributes type, early at launch (in `application(_:didFinishLaunchingWithOptions:)` or the
    /// `App`'s `init`), so that an activity started by a push while the app was not running is reported when the
    /// system wakes the app. Nothing is sent before it (or a `register` call) is made: call it once the user agreed.
    /// - Parameters:
    ///   - feed: The key of the feed an activity follows, read from its attributes (`nil`: none).
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
            await client.reconcile(attributesType: attributesType, running: Self.running(Attributes.self))
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
                        for activity in Activity<Attributes>.activities {
                            await Self.follow(
                                activity.id,
                                attributesType: attributesType,
                                client: client,
                                feed: feed,
                                channelID: channelID,
                                in: &activities
                            )
                        }
                        for await activity in started {
                            await Self.follow(
                                activity.id,
                                attributesType: attributesType,
                                client: client,
                                feed: feed,
                                channelID: channelID,
                                in: &activities
                            )
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

    /// Starts following one activity (once): reports it, then its update tokens until it ends, and its end and
    /// dismissal; the observation ends with the activity.
    @available(iOS 16.2, *)
    private static func follow<Attributes: ObservableActivityAttributes>(
        _ activityID: String,
        attributesType: String,
        client: LivecastClient,
        feed: @escaping @Sendable (Attributes) -> String?,
        channelID: @escaping @Sendable (Attributes) -> String?,
        in group: inout TaskGroup<Void>
    ) async {
        guard await client.claimObservation(of: activityID) else { return }
        group.addTask {
            await client.follow(
                activityID,
                updateTokens: {
                    guard let activity = Self.activity(Attributes.self, id: activityID) else { return }
                    let updates = activity.pushTokenUpdates
                    let reported = LivecastActivity(id: activityID, attributesType: attributesType, feed: feed(activity.attributes))
                    if let channel = channelID(activity.attributes) {
                        await client.register(activity: reported, channelID: channel)
                    } else if let token = activity.pushToken {
                        await client.register(activity: reported, updateToken: token)
                    } else {
                        await client.register(activity: reported)
                    }
                    await client.observeUpdateTokens(of: reported, updates)
                },
                states: { report in
                    guard let activity = Self.activity(Attributes.self, id: activityID) else { return }
                    let updates = activity.activityStateUpdates
                    if let now = Self.state(activity.activityState), now == .ended || now == .dismissed {
                        guard await report(now) else { return }
                    }
                    for await state in updates {
                        guard let state = Self.state(state) else { continue }
                        guard await report(state) else { return }
                    }
                }
            )
        }
    }

    /// The activity of that id, while ActivityKit shows it.
    @available(iOS 16.2, *)
    private static func activity<Attributes: ObservableActivityAttributes>(_ type: Attributes.Type, id: String) -> Activity<Attributes>? {
        Activity<Attributes>.activities.first { $0.id == id }
    }

    /// ActivityKit's state as LivecastKit's; `nil` for a state it does not know (a newer SDK's).
    @available(iOS 16.2, *)
    private static func state(_ state: ActivityState) -> LivecastActivityState? {
        switch state {
        case .active: .active
        case .ended: .ended
        case .dismissed: .dismissed
        case .stale: .stale
        #if canImport(ActivityKit)
        @unknown default: nil
        #endif
        }
    }
}
#endif
