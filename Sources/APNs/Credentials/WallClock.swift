import Foundation
import NIOConcurrencyHelpers

/// The time of day, in seconds since 1970: what provider tokens are dated with. Injected so tests can move it.
public protocol WallClock: Sendable {
    /// Now, in seconds since 1970.
    var secondsSince1970: Int { get }
}

/// The system's clock.
public struct SystemWallClock: WallClock {
    public init() {}
    public var secondsSince1970: Int { Int(Date().timeIntervalSince1970) }
}

/// A clock that moves only when told to, for tests.
public final class ManualWallClock: WallClock {
    private let seconds: NIOLockedValueBox<Int>

    /// Creates a clock showing `start` (default: the system's time now).
    public init(start: Int = SystemWallClock().secondsSince1970) {
        self.seconds = NIOLockedValueBox(start)
    }

    public var secondsSince1970: Int { self.seconds.withLockedValue { $0 } }

    /// Moves the clock forward.
    public func advance(by seconds: Int) {
        self.seconds.withLockedValue { $0 += seconds }
    }
}
