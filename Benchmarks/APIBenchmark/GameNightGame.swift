import APNsEmulator
import Foundation
import NIOHTTP1
import Synchronization

/// The game night itself, through the API: a feed with a Most Recent Message channel and its token followers, then
/// updates posted to the instances in turn while APNs browns out, three followers' tokens answer `410`, followers
/// rotate their tokens, late fans join, an instance is killed and restarted and PostgreSQL restarts; then the end.
/// Everything the API answered goes in ``ledger``.
struct GameNightGame: Sendable {
    let stack: GameNightStack
    let sizes: GameNightSizes
    let ledger = GameNightLedger()
    /// The feed's key, new each run.
    let feedKey = "gamenight-\(BenchmarkStack.runTag())"
    /// How many calls run at once while the followers register.
    let registrationConcurrency = 16

    /// The instance killed and restarted mid-game.
    static let killedInstance = 1

    /// What the game left to check on the wire.
    struct Outcome: Sendable {
        /// `channel:<id>`, the feed's channel on the wire.
        var channelTarget: String
        /// The end's content state: what every follower and the channel should show last.
        var finalContentState: [String: Int]
        /// When the first update was due (wall clock, seconds since 1970).
        var startedAt: Double
    }

    /// Plays the game. - Throws: ``BenchmarkFailure`` when the feed cannot be made, or an instance does not start
    /// again.
    func play() async throws -> Outcome {
        let channelTarget = try await self.createFeed()
        try await self.registerFollowers()
        let unregistered = self.injectFaults()
        let clock = ContinuousClock()
        let start = clock.now
        let startedAt = Date().timeIntervalSince1970
        let events = EventLog(start: start)
        events.note("\(unregistered) follower tokens answer 410; \(Int(self.sizes.failureShare * 100)) % of pushes refused")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<self.sizes.updates {
                group.addTask {
                    try await clock.sleep(until: start + .seconds(Double(index) / self.sizes.rate))
                    await self.postUpdate(index)
                }
            }
            let followers = self.ledger.followers
            let rotating = Self.spread(self.sizes.rotations, over: followers.indices.filter { !followers[$0].isUnregistered })
            for (turn, follower) in rotating.enumerated() {
                group.addTask {
                    try await clock.sleep(until: start + .seconds(self.moment(turn, of: rotating.count, from: 0.1, to: 0.8)))
                    await self.rotate(follower, turn: turn)
                }
            }
            for fan in 0..<self.sizes.lateFans {
                group.addTask {
                    try await clock.sleep(until: start + .seconds(self.moment(fan, of: self.sizes.lateFans, from: 0.1, to: 0.85)))
                    await self.registerFollower(self.sizes.followers + fan, isLateFan: true, on: fan % self.instances)
                }
            }
            if let killAt = self.sizes.killAt {
                group.addTask {
                    try await clock.sleep(until: start + .seconds(killAt))
                    await self.stack.kill(Self.killedInstance)
                    events.note("instance \(Self.killedInstance) killed (SIGKILL)")
                    try await clock.sleep(until: start + .seconds(killAt + self.sizes.restartAfter))
                    try await self.stack.start(Self.killedInstance)
                    events.note("instance \(Self.killedInstance) started again")
                }
            }
            if let postgresRestartAt = self.sizes.postgresRestartAt {
                group.addTask {
                    try await clock.sleep(until: start + .seconds(postgresRestartAt))
                    events.note("PostgreSQL restarting (fast shutdown, \(self.sizes.postgresDown) s down)")
                    try await self.stack.restartPostgres(down: .seconds(self.sizes.postgresDown))
                    events.note("PostgreSQL accepts connections again")
                }
            }
            try await group.waitForAll()
        }
        let finalContentState = Self.contentState(self.sizes.updates)
        await self.postEnd(finalContentState)
        events.note("end posted")
        return Outcome(channelTarget: channelTarget, finalContentState: finalContentState, startedAt: startedAt)
    }

    // MARK: Setup

    /// `PUT …/feeds/{key}` with a Most Recent Message channel. - Returns: the channel's wire target.
    private func createFeed() async throws -> String {
        let request = APIRequest(
            .PUT,
            "\(self.stack.appPath)/feeds/\(self.feedKey)",
            json: #"{"attributesType":"\#(BenchmarkStack.attributesType)","attributes":{"home":"Giants","away":"Mets"},"#
                + #""channel":{"storagePolicy":"mostRecentMessage"}}"#
        )
        let answer = await self.stack.client.call(request, on: 0)
        guard answer.isSuccess else {
            self.ledger.fail(.setup, "creating the feed", answer)
            throw BenchmarkFailure("creating the feed answered \(answer.description)")
        }
        struct Feed: Decodable { var channelId: String? }
        guard let channelID = try? JSONDecoder().decode(Feed.self, from: Data(answer.body.utf8)).channelId else {
            throw BenchmarkFailure("the feed has no channel: \(answer.body)")
        }
        return "channel:\(channelID)"
    }

    /// Registers the followers, a few calls at a time, spread over the instances in turn.
    private func registerFollowers() async throws {
        let next = NextIndex(limit: self.sizes.followers)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<self.registrationConcurrency {
                group.addTask {
                    while let index = next.take() {
                        await self.registerFollower(index, isLateFan: false, on: worker % self.instances)
                    }
                }
            }
        }
        guard self.ledger.followers.count > GameNightSizes.unregisteredFollowers else {
            throw BenchmarkFailure("the followers could not be registered: \(self.ledger.firstError ?? "")")
        }
    }

    /// The emulator's faults from now on: the brownout, and three followers' tokens answering `410` with a time after
    /// their registration. - Returns: how many tokens answer `410`.
    private func injectFaults() -> Int {
        let followers = self.ledger.followers
        let chosen = Self.spread(GameNightSizes.unregisteredFollowers, over: Array(followers.indices))
        self.ledger.markUnregistered(chosen)
        let unregisteredAt = Int((Date().timeIntervalSince1970 + 1) * 1_000)
        // As in BrownoutTests: mostly 503; of 300 refusals, one a GOAWAY and one a dropped connection.
        let refusals = Array(repeating: FaultAnswer.status(503, reason: "ServiceUnavailable"), count: 298) + [.goAway(reason: "Shutdown"), .drop]
        self.stack.emulator.setFaults(
            FaultPlan(
                failureShare: self.sizes.failureShare,
                failureAnswers: refusals,
                unregisteredTokens: Dictionary(uniqueKeysWithValues: chosen.map { (followers[$0].token, unregisteredAt) })
            )
        )
        return chosen.count
    }

    // MARK: Calls

    /// Registers follower `index` with a new token of its own.
    private func registerFollower(_ index: Int, isLateFan: Bool, on instance: Int) async {
        let activityID = "\(self.feedKey)-\(index)"
        let token = Self.randomToken()
        let answer = await self.stack.client.call(self.activity(activityID, token: token), on: instance)
        guard answer.isSuccess else {
            self.ledger.fail(.registration, "registering \(activityID)", answer)
            return
        }
        self.ledger.addFollower(
            GameNightLedger.Follower(activityID: activityID, token: token, since: answer.answeredAt, isLateFan: isLateFan)
        )
    }

    /// Reports a new token for follower `index`.
    private func rotate(_ index: Int, turn: Int) async {
        let activityID = self.ledger.followers[index].activityID
        let token = Self.randomToken()
        let answer = await self.stack.client.call(self.activity(activityID, token: token), on: turn % self.instances)
        guard answer.isSuccess else {
            self.ledger.fail(.registration, "rotating the token of \(activityID)", answer)
            return
        }
        self.ledger.rotate(index, to: token, at: answer.answeredAt)
    }

    /// Posts update `index` to instance `index` modulo the instances.
    private func postUpdate(_ index: Int) async {
        let contentState = Self.contentState(index)
        if let posted = await self.post("updates", index: index, contentState: contentState, naming: "update \(index)") {
            self.ledger.addUpdate(posted)
        }
    }

    /// Posts the end with `contentState`.
    private func postEnd(_ contentState: [String: Int]) async {
        if let posted = await self.post("end", index: self.sizes.updates, contentState: contentState, naming: "the end") {
            self.ledger.setEnd(posted)
        }
    }

    /// Posts `contentState` to the feed's `route` (`updates` or `end`) on instance `index` modulo the instances, with an
    /// `Idempotency-Key`, so that a retry of a call whose answer was lost is answered from the first.
    /// - Returns: What was posted, or `nil` when the call failed (kept in the ledger under `label`).
    private func post(_ route: String, index: Int, contentState: [String: Int], naming label: String) async -> GameNightLedger.Posted? {
        let request = APIRequest(
            .POST,
            "\(self.stack.appPath)/feeds/\(self.feedKey)/\(route)",
            json: #"{"contentState":\#(Self.json(contentState))}"#,
            headers: ["idempotency-key": "\(self.feedKey)-\(route)-\(index)"]
        )
        let answer = await self.stack.client.call(request, on: index % self.instances)
        guard answer.isSuccess, let timestamp = Self.timestamp(of: answer) else {
            self.ledger.fail(.update, label, answer)
            return nil
        }
        return GameNightLedger.Posted(index: index, timestamp: timestamp, answeredAt: answer.answeredAt, contentState: contentState)
    }

    /// `PUT …/activities/{id}`: a follower of the feed with its own update token.
    private func activity(_ id: String, token: String) -> APIRequest {
        APIRequest(
            .PUT,
            "\(self.stack.appPath)/activities/\(id)",
            json: #"{"attributesType":"\#(BenchmarkStack.attributesType)","pushToken":"\#(token)","feed":"\#(self.feedKey)"}"#
        )
    }

    // MARK: Helpers

    /// How many instances the calls go round.
    private var instances: Int { self.stack.client.instances }

    /// The content state of update `index` (the end's is `index` = the update count): each one different.
    static func contentState(_ index: Int) -> [String: Int] {
        ["home": (index + 3) / 7, "away": (index + 5) / 11, "minute": index + 1]
    }

    /// Compact JSON with sorted keys, as the wire log writes content states.
    static func json(_ contentState: [String: Int]) -> String {
        "{" + contentState.sorted { $0.key < $1.key }.map { #""\#($0.key)":\#($0.value)"# }.joined(separator: ",") + "}"
    }

    /// The `timestamp` of a 202's body.
    private static func timestamp(of answer: GameNightClient.Answer) -> Int? {
        struct Accepted: Decodable { var timestamp: Int? }
        return (try? JSONDecoder().decode(Accepted.self, from: Data(answer.body.utf8)))?.timestamp
    }

    /// 32 random bytes in hex.
    private static func randomToken() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max)) }.joined()
    }

    /// `count` elements of `elements`, evenly spaced.
    private static func spread(_ count: Int, over elements: [Int]) -> [Int] {
        guard count > 0, !elements.isEmpty else { return [] }
        return (0..<min(count, elements.count)).map { elements[$0 * elements.count / min(count, elements.count)] }
    }

    /// When the `turn`th of `count` calls spread between the shares `from` and `to` of the game is due, in seconds.
    private func moment(_ turn: Int, of count: Int, from: Double, to: Double) -> Double {
        self.sizes.seconds * (from + (to - from) * Double(turn) / Double(max(count, 1)))
    }
}

/// Hands out the indices `0..<limit` once each, to workers running side by side.
private final class NextIndex: Sendable {
    private let next: Mutex<Int>
    private let limit: Int

    init(limit: Int) {
        self.next = Mutex(0)
        self.limit = limit
    }

    func take() -> Int? {
        self.next.withLock { next in
            guard next < self.limit else { return nil }
            defer { next += 1 }
            return next
        }
    }
}

/// Prints what happens during the game to standard error, with the seconds since its start.
private struct EventLog: Sendable {
    let start: ContinuousClock.Instant

    func note(_ what: String) {
        let seconds = String(format: "%6.1f", (ContinuousClock.now - self.start).inSeconds)
        FileHandle.standardError.write(Data("gamenight: \(seconds) s  \(what)\n".utf8))
    }
}
