import APNsEmulator
import Foundation
import LivecastCore
import NIOHTTP1
import Synchronization

/// What the renewal game came to, judged from the emulator's iPhones, its wire log and the activities' records.
struct RenewalVerdict: Sendable {
    let stack: GameNightStack
    let game: RenewalGame
    let played: RenewalGame.Played

    /// The figures, as one `renewal key=value …` line, and what failed.
    struct Outcome {
        var line: String
        var failures: [String]
    }

    func judge() async -> Outcome {
        let phones = self.game.phones.withLock { $0 }
        let records = self.stack.emulator.wireRecords
        let wire = WireJudge.judge(records)
        let reported = self.game.reportedAt.withLock { $0 }
        var (renewed, unrenewed, final, endedEarly, notEnded, startedAgain, tokenlessMarked) = (0, 0, 0, 0, 0, 0, 0)
        var failures: [String] = []
        for phone in phones {
            let shown = self.stack.emulator.device(id: phone.deviceID)?.activities ?? []
            switch phone.role {
            case .tokenFollower, .channelFollower:
                guard shown.count >= 2, let newest = shown.last else {
                    unrenewed += 1
                    continue
                }
                renewed += 1
                if newest.contentState == .object(["home": .int(-1)]) { final += 1 }
                guard phone.role == .tokenFollower, let oldToken = shown[shown.count - 2].updateToken else { continue }
                // The old activity's end reached it after its successor was reported, never before.
                let end = records.first { $0.target == "device:\(oldToken)" && $0.event == "end" && $0.isAccepted }
                switch (end, reported[newest.id]) {
                case (let end?, let successor?) where end.arrivedAt < successor: endedEarly += 1
                case (nil, _): notEnded += 1
                default: break
                }
            case .dismissing:
                let starts = records.filter { $0.target == "device:\(phone.pushToStartToken)" && $0.isAccepted }
                if starts.count > 1 || shown.count > 1 { startedAgain += 1 }
            case .tokenless:
                guard let first = shown.first else { continue }
                let record = await self.stack.client.call(APIRequest(.GET, "\(self.stack.appPath)/activities/\(first.id)"), on: 0)
                if shown.count == 1, record.body.contains(#""state":"noPushToStartToken""#) { tokenlessMarked += 1 }
            }
        }
        let followers = phones.count { $0.role == .tokenFollower || $0.role == .channelFollower }
        let tokenless = phones.count { $0.role == .tokenless }
        let callsFailed = self.game.failures.withLock { $0.count }
        if unrenewed > 0 { failures.append("\(unrenewed) of \(followers) followers were not renewed before their lifetime ended") }
        if final < renewed { failures.append("\(renewed - final) renewed activities do not show the end") }
        if endedEarly > 0 { failures.append("\(endedEarly) token followers' old activities ended before their successor was reported") }
        if notEnded > 0 { failures.append("\(notEnded) token followers' old activities got no end") }
        if startedAgain > 0 { failures.append("\(startedAgain) iPhones whose user swiped the activity away were started again") }
        if tokenlessMarked < tokenless {
            failures.append("\(tokenless - tokenlessMarked) of \(tokenless) token-less activities' records do not say why")
        }
        if !wire.isClean { failures.append("at the wire: \(wire)") }
        if callsFailed > 0 { failures.append("\(callsFailed) calls failed; the first: \(self.game.failures.withLock { $0.first ?? "" })") }
        let fields: [(String, Any)] = [
            ("followers", followers), ("renewed", renewed), ("unrenewed", unrenewed), ("final", final), ("old_ended_early", endedEarly),
            ("old_not_ended", notEnded), ("dismissed_started_again", startedAgain), ("tokenless_marked", tokenlessMarked),
            ("requests", wire.requests), ("accepted", wire.accepted), ("ordering_violations", wire.orderingViolations.count),
            ("sent_after_410", wire.sentAfterUnregistered.count), ("sent_after_end", wire.sentAfterEnd.count),
            ("dropped_by_devices", wire.droppedByDevices.count), ("calls_failed", callsFailed),
            ("verdict", failures.isEmpty ? "pass" : "fail"), ("errors", failures.count),
        ]
        return Outcome(line: "renewal " + fields.map { "\($0.0)=\($0.1)" }.joined(separator: " "), failures: failures)
    }
}
