#if os(Linux)
public import Foundation

// The value types of ActivityKit, as Apple documents them (iOS 16.1+).

/// The static data of a Live Activity, and the type of its dynamic content.
public protocol ActivityAttributes: Decodable, Encodable {
    /// The dynamic content of a Live Activity of this type.
    associatedtype ContentState: Decodable, Encodable, Hashable
}

/// A Live Activity's content: its state, when it goes stale, and its relevance.
public struct ActivityContent<State>: Equatable, Hashable where State: Decodable, State: Encodable, State: Hashable {
    /// The dynamic content.
    public var state: State
    /// When the content is out of date.
    public var staleDate: Date?
    /// How the system ranks it against the app's other Live Activities.
    public var relevanceScore: Double

    /// Content with a state, a stale date and a relevance score.
    public init(state: State, staleDate: Date?, relevanceScore: Double = 0.0) {
        self.state = state
        self.staleDate = staleDate
        self.relevanceScore = relevanceScore
    }
}

/// Where a Live Activity is in its life.
public enum ActivityState: Equatable, Hashable, Codable, Sendable {
    /// Scheduled to start at a date, not started yet (iOS 26).
    @available(iOS 26.0, *)
    case pending
    /// Running: visible and updatable.
    case active
    /// Ended, still on the Lock Screen until its dismissal.
    case ended
    /// Gone from the Lock Screen.
    case dismissed
    /// Past its stale date.
    case stale
}

/// How a Live Activity receives pushes: by its own token, or on a broadcast channel (iOS 18).
public struct PushType: Equatable, Sendable {
    private enum Kind: Equatable, Sendable {
        case token
        case channel(String)
    }

    private let kind: Kind

    /// Updates through the activity's own push token.
    public static var token: PushType { PushType(kind: .token) }

    /// Updates through a broadcast channel.
    @available(iOS 18.0, *)
    public static func channel(_ channelId: String) -> PushType { PushType(kind: .channel(channelId)) }
}

/// When the system removes an ended Live Activity from the Lock Screen.
public struct ActivityUIDismissalPolicy: Equatable, Sendable {
    private enum Kind: Equatable, Sendable {
        case standard
        case immediate
        case after(Date)
    }

    private let kind: Kind

    /// Up to four hours after the end.
    public static let `default` = ActivityUIDismissalPolicy(kind: .standard)
    /// At once.
    public static let immediate = ActivityUIDismissalPolicy(kind: .immediate)

    /// At a date within four hours of the end.
    public static func after(_ date: Date) -> ActivityUIDismissalPolicy { ActivityUIDismissalPolicy(kind: .after(date)) }
}

/// Why ActivityKit refused to start an activity.
public enum ActivityAuthorizationError: Error, Sendable {
    /// The user turned Live Activities off for the app.
    case denied
}
#endif
