#if os(Linux)
public import Foundation

/// What the registry does with an activity of any attributes type.
protocol StandInActivity: AnyObject {
    /// Ends its token, state and content sequences.
    func finishSequences()
}

/// A Live Activity, as ActivityKit's `Activity` presents it (iOS 16.1+; the push-to-start token 17.2+). Like
/// ActivityKit's, it is not `Sendable`: code that follows an activity across tasks passes its `id` and looks it up.
public final class Activity<Attributes: ActivityAttributes>: Identifiable, StandInActivity {
    /// Its unique id.
    public let id: String
    /// Its static data.
    public let attributes: Attributes

    private let lock = NSLock()
    private var currentState: ActivityState
    private var currentContent: ActivityContent<Attributes.ContentState>
    private var currentPushToken: Data?
    let tokens = Broadcast<Data>()
    let states = Broadcast<ActivityState>()
    let contents = Broadcast<ContentBox>()

    init(id: String, attributes: Attributes, content: ActivityContent<Attributes.ContentState>, state: ActivityState, pushToken: Data?) {
        self.id = id
        self.attributes = attributes
        self.currentContent = content
        self.currentState = state
        self.currentPushToken = pushToken
    }

    /// Where it is in its life.
    public var activityState: ActivityState { self.lock.withLock { self.currentState } }

    /// Its current content.
    public var content: ActivityContent<Attributes.ContentState> { self.lock.withLock { self.currentContent } }

    /// Its update token, once the system has one (activities started with `pushType: .token`).
    public var pushToken: Data? { self.lock.withLock { self.currentPushToken } }

    /// Its update tokens: the current one, then each rotation.
    public var pushTokenUpdates: PushTokenUpdates { PushTokenUpdates(stream: self.tokens.subscribe(initial: self.pushToken)) }

    /// Its state changes.
    public var activityStateUpdates: ActivityStateUpdates { ActivityStateUpdates(stream: self.states.subscribe()) }

    /// Its content changes.
    public var contentUpdates: ContentUpdates { ContentUpdates(stream: self.contents.subscribe()) }

    /// The app's activities of this type that the system still shows (active, stale or ended, not dismissed).
    public static var activities: [Activity<Attributes>] {
        ActivityRegistry.shared.activities(of: Attributes.self).compactMap { $0 as? Activity<Attributes> }
    }

    /// Each activity of this type started from now on, by the app or by a push.
    public static var activityUpdates: ActivityUpdates {
        ActivityUpdates(stream: ActivityRegistry.shared.entry(for: Attributes.self).started.subscribe())
    }

    /// The token with which a push starts an activity of this type, once the system has one.
    @available(iOS 17.2, *)
    public static var pushToStartToken: Data? { ActivityRegistry.shared.entry(for: Attributes.self).pushToStartToken }

    /// The push-to-start tokens: the current one, then each rotation (none at all while
    /// ``ActivityKitControl/setSequencesSilent(_:)`` says so, as on some devices).
    @available(iOS 17.2, *)
    public static var pushToStartTokenUpdates: PushTokenUpdates {
        let entry = ActivityRegistry.shared.entry(for: Attributes.self)
        let initial = ActivityRegistry.shared.areSequencesSilent ? nil : entry.pushToStartToken
        return PushTokenUpdates(stream: entry.pushToStartTokens.subscribe(initial: initial))
    }

    /// Starts an activity from the app.
    public static func request(
        attributes: Attributes,
        content: ActivityContent<Attributes.ContentState>,
        pushType: PushType? = nil
    ) throws -> Activity<Attributes> {
        guard ActivityAuthorizationInfo().areActivitiesEnabled else { throw ActivityAuthorizationError.denied }
        let token = pushType == .token ? Data(UUID().uuidString.utf8.prefix(16)) : nil
        return ActivityKitControl.start(attributes, content: content, pushToken: token)
    }

    /// Updates its content.
    public func update(_ content: ActivityContent<Attributes.ContentState>) async {
        self.lock.withLock { self.currentContent = content }
        self.contents.yield(ContentBox(value: content))
    }

    /// Ends it, with its final content, and dismisses it as the policy says (`.immediate` at once).
    public func end(_ content: ActivityContent<Attributes.ContentState>?, dismissalPolicy: ActivityUIDismissalPolicy = .default) async {
        if let content { await self.update(content) }
        ActivityKitControl.setState(of: self, .ended)
        if dismissalPolicy == .immediate { ActivityKitControl.setState(of: self, .dismissed) }
    }

    func setState(_ state: ActivityState) -> Bool {
        self.lock.withLock {
            guard self.currentState != state, self.currentState != .dismissed else { return false }
            self.currentState = state
            return true
        }
    }

    func finishSequences() {
        self.tokens.finish()
        self.states.finish()
        self.contents.finish()
    }

    func setPushToken(_ token: Data) {
        self.lock.withLock { self.currentPushToken = token }
    }

    /// A content value handed between tasks (`ContentState` need not be `Sendable`).
    struct ContentBox: @unchecked Sendable {
        let value: ActivityContent<Attributes.ContentState>
    }

    /// An asynchronous sequence of push tokens.
    public struct PushTokenUpdates: AsyncSequence {
        public typealias Element = Data
        let stream: AsyncStream<Data>

        /// Creates the iterator.
        public func makeAsyncIterator() -> Iterator { Iterator(base: self.stream.makeAsyncIterator()) }

        /// The iterator.
        public struct Iterator: AsyncIteratorProtocol {
            var base: AsyncStream<Data>.Iterator
            /// The next token; `nil` once the sequence ended.
            public mutating func next() async -> Data? { await self.base.next() }
        }
    }

    /// An asynchronous sequence of activity states.
    public struct ActivityStateUpdates: AsyncSequence {
        public typealias Element = ActivityState
        let stream: AsyncStream<ActivityState>

        /// Creates the iterator.
        public func makeAsyncIterator() -> Iterator { Iterator(base: self.stream.makeAsyncIterator()) }

        /// The iterator.
        public struct Iterator: AsyncIteratorProtocol {
            var base: AsyncStream<ActivityState>.Iterator
            /// The next state; `nil` once the sequence ended.
            public mutating func next() async -> ActivityState? { await self.base.next() }
        }
    }

    /// An asynchronous sequence of contents.
    public struct ContentUpdates: AsyncSequence {
        public typealias Element = ActivityContent<Attributes.ContentState>
        let stream: AsyncStream<ContentBox>

        /// Creates the iterator.
        public func makeAsyncIterator() -> Iterator { Iterator(base: self.stream.makeAsyncIterator()) }

        /// The iterator.
        public struct Iterator: AsyncIteratorProtocol {
            var base: AsyncStream<ContentBox>.Iterator
            /// The next content; `nil` once the sequence ended.
            public mutating func next() async -> ActivityContent<Attributes.ContentState>? { await self.base.next()?.value }
        }
    }

    /// An asynchronous sequence of newly started activities.
    public struct ActivityUpdates: AsyncSequence {
        public typealias Element = Activity<Attributes>
        let stream: AsyncStream<UncheckedBox>

        /// Creates the iterator.
        public func makeAsyncIterator() -> Iterator { Iterator(base: self.stream.makeAsyncIterator()) }

        /// The iterator.
        public struct Iterator: AsyncIteratorProtocol {
            var base: AsyncStream<UncheckedBox>.Iterator
            /// The next activity started; `nil` once the sequence ended.
            public mutating func next() async -> Activity<Attributes>? {
                while let box = await self.base.next() {
                    if let activity = box.value as? Activity<Attributes> { return activity }
                }
                return nil
            }
        }
    }
}
#endif
