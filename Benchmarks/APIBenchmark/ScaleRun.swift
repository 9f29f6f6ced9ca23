import APNsEmulator
import Foundation
import NIOHTTP1

/// One measured run of the scale benchmark: the shape's `livecast serve` instances started on the database, one
/// update posted to the run's feed, the wire watched until every follower has it and no push has come for a while,
/// each instance's peak memory read, and the instances stopped.
struct ScaleRun: Sendable {
    let stack: GameNightStack
    let followers: ScaleFollowers
    let shape: ScaleShape
    /// Which run this is: its feed and followers.
    let run: Int
    /// The longest wait after the update's 202, in seconds.
    let timeout: Double

    /// What a run measured.
    struct Result: Sendable {
        var shape: ScaleShape
        /// When the update's 202 was read (wall clock, seconds since 1970).
        var postedAt: Double
        /// Each instance's peak resident memory, in bytes, when known.
        var peakResidentBytes: [Int?]
        var verdict: ScaleVerdict

        /// Seconds from the 202 to the last follower's push on the wire; `nil` when none arrived.
        var seconds: Double? { self.verdict.lastArrival.map { $0 - self.postedAt } }

        /// Followers reached a second.
        var pushesPerSecond: Double? {
            guard let seconds = self.seconds, seconds > 0 else { return nil }
            return Double(self.verdict.reached) / seconds
        }
    }

    /// Runs it. - Throws: ``BenchmarkFailure`` when an instance does not start or the update is refused.
    func measure() async throws -> Result {
        self.stack.emulator.clearWireRecords()
        let targets = self.followers.targets(run: self.run)
        var result: Result?
        try await ensuring {
            for instance in 0..<self.shape.instances {
                try await self.stack.start(instance, arguments: ["--apns-connections", String(self.shape.connections)])
            }
            let contentState = ["homeScore": self.run + 1, "awayScore": 0]
            let (update, postedAt) = try await self.postUpdate(contentState)
            let settled = try await GameNightSettle(emulator: self.stack.emulator, quiet: 2, giveUp: 60, timeout: self.timeout)
                .wait(for: targets) { $0.timestamp == update.timestamp && $0.event == "update" }
            if !settled.isQuiet || settled.notEnded > 0 {
                ScaleCommand.note("run \(self.run): waited \(Int(settled.waited)) s, \(settled.notEnded) followers without the update")
            }
            let peaks = (0..<self.shape.instances).map { self.stack.peakResidentBytes($0) }
            let verdict = ScaleVerdict(records: self.stack.emulator.wireRecords, run: self.run, followers: self.followers.count, update: update)
            result = Result(shape: self.shape, postedAt: postedAt, peakResidentBytes: peaks, verdict: verdict)
        } cleanup: {
            await withTaskGroup(of: Void.self) { group in
                for instance in 0..<self.shape.instances { group.addTask { await self.stack.stop(instance) } }
            }
        }
        self.stack.emulator.clearWireRecords()
        guard let result else { throw BenchmarkFailure("run \(self.run) measured nothing") }
        return result
    }

    /// Posts the feed's update to instance 0, with an `Idempotency-Key` so that a retry is answered from the first.
    /// - Returns: What its pushes carry, and when its 202 was read.
    private func postUpdate(_ contentState: [String: Int]) async throws -> (ScaleVerdict.Update, Double) {
        let feedKey = ScaleFollowers.feedKey(self.run)
        let request = APIRequest(
            .POST,
            "\(self.stack.appPath)/feeds/\(feedKey)/updates",
            json: #"{"contentState":\#(GameNightGame.json(contentState))}"#,
            headers: ["idempotency-key": "\(feedKey)-update"]
        )
        let answer = await self.stack.client.call(request, on: 0)
        struct Accepted: Decodable { var timestamp: Int }
        guard answer.isSuccess, let accepted = try? JSONDecoder().decode(Accepted.self, from: Data(answer.body.utf8)) else {
            throw BenchmarkFailure("the update of \(feedKey) answered \(answer.description)")
        }
        return (ScaleVerdict.Update(timestamp: accepted.timestamp, contentState: GameNightGame.json(contentState)), answer.answeredAt)
    }
}
