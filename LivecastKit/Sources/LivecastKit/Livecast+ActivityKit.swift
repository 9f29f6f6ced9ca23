#if canImport(ActivityKit)
public import ActivityKit
import Foundation

// Compiled only where ActivityKit exists (iOS, iPadOS); Linux and macOS builds leave it out. It uses only
// ActivityKit's documented API: `Activity<A>.pushToStartTokenUpdates` (iOS 17.2), `activities`, `activityUpdates`,
// and each activity's `id`, `attributes`, `pushTokenUpdates` and `activityStateUpdates`, and
// `ActivityAuthorizationInfo`'s `frequentPushesEnabled` and `frequentPushEnablementUpdates`.

/// The one call an app makes at launch: ``Livecast/observe(_:client:feed:channelID:)``.
public enum Livecast {
    /// Reports everything ActivityKit tells the app about activities of type `Attributes` to Livecast through
    /// `client`, for as long as the app runs: the push-to-start token and each of its rotations (iOS 17.2+), every
    /// activity (those running at launch, and each one started later, by the app or by a push), its update tokens,
    /// its end and its dismissal, and changes of the frequent-updates setting.
    ///
    /// Call it once per attributes type, early at launch (in `application(_:didFinishLaunchingWithOptions:)` or the
    /// `App`'s `init`), so that an activity started by a push while the app was not running is reported when the
    /// system wakes the app.
    /// - Parameters:
    ///   - feed: The key of the feed an activity follows, read from its attributes (`nil`: none).
    ///   - channelID: The broadcast channel an activity subscribed to, read from its attributes, for channel-based
    ///     activities (iOS 18+); ActivityKit does not tell it, so the app must (`nil`: token-based).
    /// - Returns: The observing task; cancel it to stop.
    @available(iOS 16.2, *)
    @discardableResult
    public static func observe<Attributes: ActivityAttributes>(
        _ type: Attributes.Type,
        client: LivecastClient,
        feed: @escaping @Sendable (Attributes) -> String? = { _ in nil },
        channelID: @escaping @Sendable (Attributes) -> String? = { _ in nil }
    ) -> Task<Void, Never> {
        let attributesType = String(describing: type)
        return Task {
            await withTaskGroup(of: Void.self) { group in
                if #available(iOS 17.2, *) {
                    group.addTask {
                        await client.observe(
                            pushToStartTokens: Activity<Attributes>.pushToStartTokenUpdates,
                            attributesType: attributesType,
                            frequentUpdatesEnabled: ActivityAuthorizationInfo().frequentPushesEnabled
                        )
                    }
                }
                group.addTask {
                    for await enabled in ActivityAuthorizationInfo().frequentPushEnablementUpdates {
                        await client.setFrequentUpdatesEnabled(enabled)
                    }
                }
                group.addTask {
                    await withTaskGroup(of: Void.self) { activities in
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
                        for await activity in Activity<Attributes>.activityUpdates {
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
        }
    }

    /// Starts following one activity (once): reports it, then its update tokens and its state, each in a task of
    /// its own that looks the activity up by id, so no `Activity` crosses tasks.
    @available(iOS 16.2, *)
    private static func follow<Attributes: ActivityAttributes>(
        _ activityID: String,
        attributesType: String,
        client: LivecastClient,
        feed: @escaping @Sendable (Attributes) -> String?,
        channelID: @escaping @Sendable (Attributes) -> String?,
        in group: inout TaskGroup<Void>
    ) async {
        guard await client.claimObservation(of: activityID) else { return }
        group.addTask {
            guard let activity = Activity<Attributes>.activities.first(where: { $0.id == activityID }) else { return }
            let reported = LivecastActivity(id: activityID, attributesType: attributesType, feed: feed(activity.attributes))
            if let channel = channelID(activity.attributes) {
                await client.register(activity: reported, channelID: channel)
            } else if let token = activity.pushToken {
                await client.register(activity: reported, updateToken: token)
            } else {
                await client.register(activity: reported)
            }
            await client.observeUpdateTokens(of: reported, activity.pushTokenUpdates)
        }
        group.addTask {
            guard let activity = Activity<Attributes>.activities.first(where: { $0.id == activityID }) else { return }
            await client.observeStates(of: activityID, activity.activityStateUpdates.compactMap(Self.state))
        }
    }

    /// ActivityKit's state as LivecastKit's; `nil` for a state it does not know (a newer SDK's).
    @available(iOS 16.2, *)
    private static func state(_ state: ActivityState) -> LivecastActivityState? {
        switch state {
        case .active: .active
        case .ended: .ended
        case .dismissed: .dismissed
        case .stale: .stale
        @unknown default: nil
        }
    }
}
#endif
