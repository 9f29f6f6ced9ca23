#if os(Linux)
public import Foundation

/// The tests' hand on the stand-in "system": what ActivityKit does on a phone (a push starts an activity, APNs
/// rotates a token, the user dismisses an activity or turns frequent updates off), done on request. Not part of
/// ActivityKit's API.
public enum ActivityKitControl {
    /// Starts an activity of the app, as a push-to-start push or `Activity.request` would: it is listed in
    /// `Activity.activities` and yielded by `Activity.activityUpdates`.
    /// - Parameter state: Its state from the start (an activity that ended while the app was not running: `.ended`;
    ///   one the app scheduled for a later date: `.pending`, then ``setState(of:_:)`` `.active` when it starts).
    @discardableResult
    public static func start<Attributes: ActivityAttributes>(
        _ attributes: Attributes,
        content: ActivityContent<Attributes.ContentState>,
        pushToken: Data? = nil,
        state: ActivityState = .active,
        id: String = UUID().uuidString
    ) -> Activity<Attributes> {
        let activity = Activity(id: id, attributes: attributes, content: content, state: state, pushToken: pushToken)
        ActivityRegistry.shared.add(activity, to: Attributes.self)
        return activity
    }

    /// Gives an activity a new update token, yielded by its `pushTokenUpdates`.
    public static func rotatePushToken<Attributes>(of activity: Activity<Attributes>, to token: Data) {
        activity.setPushToken(token)
        activity.tokens.yield(token)
    }

    /// Moves an activity to `state`, yielded by its `activityStateUpdates`. `.dismissed` also removes it from
    /// `Activity.activities` and ends its sequences, as ActivityKit does.
    public static func setState<Attributes>(of activity: Activity<Attributes>, _ state: ActivityState) {
        guard activity.setState(state) else { return }
        activity.states.yield(state)
        if state == .dismissed {
            ActivityRegistry.shared.remove(activity, from: Attributes.self)
            activity.finishSequences()
        }
    }

    /// Removes an activity without a word to its observers: what an app that was not running finds at its next
    /// launch when the activity was dismissed meanwhile.
    public static func vanish<Attributes>(_ activity: Activity<Attributes>) {
        ActivityRegistry.shared.remove(activity, from: Attributes.self)
        activity.finishSequences()
    }

    /// Sets (or rotates) the push-to-start token of a type, yielded by `Activity.pushToStartTokenUpdates`.
    public static func setPushToStartToken<Attributes: ActivityAttributes>(_ token: Data, for type: Attributes.Type) {
        ActivityRegistry.shared.setPushToStartToken(token, for: type)
    }

    /// The user turns frequent updates on or off, yielded by `ActivityAuthorizationInfo.frequentPushEnablementUpdates`.
    public static func setFrequentPushesEnabled(_ enabled: Bool) {
        ActivityRegistry.shared.setFrequentPushesEnabled(enabled)
    }

    /// Makes `Activity.pushToStartTokenUpdates` and `ActivityAuthorizationInfo.frequentPushEnablementUpdates` yield
    /// nothing (neither the current value nor changes), as they can on a device: only reading
    /// `Activity.pushToStartToken` and `frequentPushesEnabled` tells the values then. ``reset()`` ends it.
    public static func setSequencesSilent(_ silent: Bool) {
        ActivityRegistry.shared.setSequencesSilent(silent)
    }

    /// The user allows or forbids the app's Live Activities.
    public static func setActivitiesEnabled(_ enabled: Bool) {
        ActivityRegistry.shared.setActivitiesEnabled(enabled)
    }

    /// How many readers follow an activity's update tokens and states now: `0` once every observer let go.
    public static func observerCount<Attributes>(of activity: Activity<Attributes>) -> Int {
        activity.tokens.subscriberCount + activity.states.subscriberCount
    }

    /// Forgets every activity and token, ends every sequence, and restores the defaults (activities enabled, frequent
    /// updates off, sequences not silent).
    public static func reset() {
        ActivityRegistry.shared.reset()
    }
}
#endif
