import APNsEmulator
import Foundation

/// Everything a game night's verdict was made from, as JSON (`gamenight --save FILE`): the wire records and what
/// the API answered, for a failed run's post-mortem or a second opinion on its figures.
struct GameNightRecording: Encodable {
    struct Follower: Encodable {
        var activityId: String
        var token: String
        var since: Double
        var rotatedAway: [Rotation]
        var isUnregistered: Bool
        var isLateFan: Bool
    }

    struct Rotation: Encodable {
        var token: String
        var at: Double
    }

    struct Posted: Encodable {
        var index: Int
        var timestamp: Int
        var answeredAt: Double
        var contentState: [String: Int]
    }

    var channelTarget: String
    var finalContentState: [String: Int]
    var startedAt: Double
    var followers: [Follower]
    var updates: [Posted]
    var end: Posted?
    var records: [WireRecord]

    init(records: [WireRecord], ledger: GameNightLedger, outcome: GameNightGame.Outcome) {
        func posted(_ update: GameNightLedger.Posted) -> Posted {
            Posted(index: update.index, timestamp: update.timestamp, answeredAt: update.answeredAt, contentState: update.contentState)
        }
        self.channelTarget = outcome.channelTarget
        self.finalContentState = outcome.finalContentState
        self.startedAt = outcome.startedAt
        self.followers = ledger.followers.map { follower in
            Follower(
                activityId: follower.activityID,
                token: follower.token,
                since: follower.since,
                rotatedAway: follower.rotatedAway.map { Rotation(token: $0.token, at: $0.at) },
                isUnregistered: follower.isUnregistered,
                isLateFan: follower.isLateFan
            )
        }
        self.updates = ledger.updates.map(posted)
        self.end = ledger.end.map(posted)
        self.records = records
    }

    /// Writes the recording to `path`.
    func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(self).write(to: URL(fileURLWithPath: path))
    }
}
