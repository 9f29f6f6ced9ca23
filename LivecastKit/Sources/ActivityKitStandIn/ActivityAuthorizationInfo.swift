#if os(Linux)
import Foundation

/// Whether the user allows the app's Live Activities, and frequent updates to them.
public struct ActivityAuthorizationInfo {
    /// Reads the current settings.
    public init() {}

    /// Whether the app may start Live Activities.
    public var areActivitiesEnabled: Bool { ActivityRegistry.shared.areActivitiesEnabled }

    /// Changes of ``areActivitiesEnabled``.
    public var activityEnablementUpdates: ActivityEnablementUpdates {
        ActivityEnablementUpdates(stream: ActivityRegistry.shared.activitiesEnabledUpdates.subscribe())
    }

    /// Whether the user allows frequent updates (iOS 16.2+).
    @available(iOS 16.2, *)
    public var frequentPushesEnabled: Bool { ActivityRegistry.shared.frequentPushesEnabled }

    /// Changes of ``frequentPushesEnabled`` (iOS 16.2+); none while ``ActivityKitControl/setSequencesSilent(_:)``
    /// says so.
    @available(iOS 16.2, *)
    public var frequentPushEnablementUpdates: FrequentPushEnablementUpdates {
        FrequentPushEnablementUpdates(stream: ActivityRegistry.shared.frequentPushesUpdates.subscribe())
    }

    /// An asynchronous sequence of ``areActivitiesEnabled`` values.
    public struct ActivityEnablementUpdates: AsyncSequence {
        public typealias Element = Bool
        let stream: AsyncStream<Bool>

        /// Creates the iterator.
        public func makeAsyncIterator() -> Iterator { Iterator(base: self.stream.makeAsyncIterator()) }

        /// The iterator.
        public struct Iterator: AsyncIteratorProtocol {
            var base: AsyncStream<Bool>.Iterator
            /// The next value; `nil` once the sequence ended.
            public mutating func next() async -> Bool? { await self.base.next() }
        }
    }

    /// An asynchronous sequence of ``frequentPushesEnabled`` values.
    public struct FrequentPushEnablementUpdates: AsyncSequence {
        public typealias Element = Bool
        let stream: AsyncStream<Bool>

        /// Creates the iterator.
        public func makeAsyncIterator() -> Iterator { Iterator(base: self.stream.makeAsyncIterator()) }

        /// The iterator.
        public struct Iterator: AsyncIteratorProtocol {
            var base: AsyncStream<Bool>.Iterator
            /// The next value; `nil` once the sequence ended.
            public mutating func next() async -> Bool? { await self.base.next() }
        }
    }
}
#endif
