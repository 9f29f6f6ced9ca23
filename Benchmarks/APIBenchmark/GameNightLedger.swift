import Synchronization

/// What the API answered during a game night: the followers and their tokens (with when each registration was
/// answered), the updates and the end with the timestamps their 202s gave, and the calls that failed. The wire
/// records are judged against it.
final class GameNightLedger: Sendable {
    /// One follower of the feed: an activity with its own update token.
    struct Follower: Sendable {
        /// The activity's id.
        var activityID: String
        /// Its current update token.
        var token: String
        /// When the registration of ``token`` was answered (wall clock, seconds since 1970).
        var since: Double
        /// Tokens it reported before, each with when the report of its successor was answered.
        var rotatedAway: [(token: String, at: Double)] = []
        /// Whether its token answers `410 Unregistered`.
        var isUnregistered = false
        /// Whether it joined during the game.
        var isLateFan = false
    }

    /// An update or the end, as its 202 answered.
    struct Posted: Sendable {
        /// Its place in the game: 0… for updates, the update count for the end.
        var index: Int
        /// The `timestamp` of the 202.
        var timestamp: Int
        /// When the 202 was read (wall clock, seconds since 1970).
        var answeredAt: Double
        /// The content state posted.
        var contentState: [String: Int]
    }

    /// What kind of call failed.
    enum Call: Sendable {
        /// Creating the feed.
        case setup
        /// A follower's registration, a rotation's or a late fan's.
        case registration
        /// An update or the end.
        case update
    }

    private struct Contents {
        var followers: [Follower] = []
        var updates: [Posted] = []
        var end: Posted?
        var failed: [Call: Int] = [:]
        var firstError: String?
    }

    private let contents = Mutex(Contents())

    /// Adds a follower. - Returns: its index.
    @discardableResult
    func addFollower(_ follower: Follower) -> Int {
        self.contents.withLock { contents in
            contents.followers.append(follower)
            return contents.followers.count - 1
        }
    }

    /// Records that follower `index` now has `token`, reported at `at`; its former token was rotated away then.
    func rotate(_ index: Int, to token: String, at: Double) {
        self.contents.withLock { contents in
            let former = contents.followers[index].token
            contents.followers[index].rotatedAway.append((former, at))
            contents.followers[index].token = token
            contents.followers[index].since = at
        }
    }

    /// Marks the followers whose tokens answer `410`.
    func markUnregistered(_ indices: [Int]) {
        self.contents.withLock { contents in
            for index in indices { contents.followers[index].isUnregistered = true }
        }
    }

    /// Records an update's 202.
    func addUpdate(_ update: Posted) {
        self.contents.withLock { $0.updates.append(update) }
    }

    /// Records the end's 202.
    func setEnd(_ end: Posted) {
        self.contents.withLock { $0.end = end }
    }

    /// Counts a call that failed after its retries, keeping the first one's answer.
    func fail(_ call: Call, _ what: String, _ answer: GameNightClient.Answer) {
        self.contents.withLock { contents in
            contents.failed[call, default: 0] += 1
            if contents.firstError == nil { contents.firstError = "\(what): \(answer.description) after \(answer.attempts) tries" }
        }
    }

    var followers: [Follower] { self.contents.withLock { $0.followers } }
    /// The updates in the order their 202s came.
    var updates: [Posted] { self.contents.withLock { $0.updates.sorted { $0.answeredAt < $1.answeredAt } } }
    var end: Posted? { self.contents.withLock { $0.end } }
    var firstError: String? { self.contents.withLock { $0.firstError } }

    /// Calls of a kind that failed after their retries.
    func failed(_ call: Call) -> Int {
        self.contents.withLock { $0.failed[call] ?? 0 }
    }

    /// Calls of every kind that failed after their retries.
    var failedCalls: Int {
        self.contents.withLock { $0.failed.values.reduce(0, +) }
    }
}
