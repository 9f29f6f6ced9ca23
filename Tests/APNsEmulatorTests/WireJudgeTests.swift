import APNsEmulator
import Testing

/// ``WireJudge`` on made-up wire logs: each rule, and the convergence figures.
@Suite struct WireJudgeTests {
    static let device = "device:aa"

    /// A record; the digest follows the timestamp unless given, so equal timestamps make identical re-sends.
    static func record(
        _ sequence: Int,
        _ target: String = device,
        timestamp: Int?,
        event: String? = "update",
        digest: String? = nil,
        status: Int? = 200,
        reason: String? = nil,
        at time: Double = 0,
        answeredAt: Double? = nil
    ) -> WireRecord {
        WireRecord(
            sequence: sequence,
            arrivedAt: time,
            target: target,
            timestamp: timestamp,
            event: event,
            bodyDigest: digest ?? "digest-\(timestamp.map(String.init) ?? "none")-\(event ?? "")",
            status: status,
            reason: reason ?? (status == 200 ? nil : "Reason"),
            answeredAt: answeredAt ?? (status == nil ? nil : time)
        )
    }

    @Test func anOlderTimestampAfterAnAcceptedNewerOneIsAViolation() {
        let verdict = WireJudge.judge([Self.record(0, timestamp: 1_700_000_005), Self.record(1, timestamp: 1_700_000_003)])
        #expect(verdict.orderingViolations.map(\.record.sequence) == [1])
        #expect(verdict.orderingViolations.first?.rule == "timestamp 1700000003 not newer than accepted 1700000005 (#0)")
        #expect(verdict.wastedPushes == 1)
        #expect(!verdict.isClean)
        #expect(verdict.requests == 2)
        #expect(verdict.accepted == 2)
        #expect(verdict.lastAccepted[Self.device]?.sequence == 1)
        // In the other order, and judged by sequence rather than by position in the array, nothing is wrong.
        let inOrder = WireJudge.judge([Self.record(1, timestamp: 1_700_000_005), Self.record(0, timestamp: 1_700_000_003)])
        #expect(inOrder.isClean, "\(inOrder)")
        #expect(inOrder.wastedPushes == 0)
    }

    @Test func anEqualTimestampWithAnotherBodyIsAViolation() {
        let verdict = WireJudge.judge([
            Self.record(0, timestamp: 5, digest: "first"),
            Self.record(1, timestamp: 5, digest: "second"),
        ])
        #expect(verdict.orderingViolations.map(\.record.sequence) == [1])
        #expect(verdict.wastedPushes == 1)
    }

    @Test func onlyAcceptedPushesCountAndOnlyForLaterArrivals() {
        let verdict = WireJudge.judge([
            Self.record(0, timestamp: 9, status: 503),
            Self.record(1, timestamp: 8, status: nil),
            Self.record(2, timestamp: 7),
            Self.record(3, timestamp: nil, event: nil),
            Self.record(4, "device:bb", timestamp: 1),
        ])
        #expect(verdict.isClean, "\(verdict)")
        #expect(verdict.accepted == 3)
        #expect(
            verdict.lastAccepted == [Self.device: Self.record(3, timestamp: nil, event: nil), "device:bb": Self.record(4, "device:bb", timestamp: 1)]
        )
    }

    @Test func anIdenticalResendIsWastedButNotAViolation() {
        let verdict = WireJudge.judge([Self.record(0, timestamp: 5), Self.record(1, timestamp: 5), Self.record(2, timestamp: 6)])
        #expect(verdict.isClean, "\(verdict)")
        #expect(verdict.wastedPushes == 1)
    }

    @Test func resendingAnOlderAcceptedPushAfterANewerOneIsAViolation() {
        let verdict = WireJudge.judge([Self.record(0, timestamp: 5), Self.record(1, timestamp: 6), Self.record(2, timestamp: 5)])
        #expect(verdict.orderingViolations.map(\.record.sequence) == [2])
        #expect(verdict.wastedPushes == 1)
    }

    @Test func aResendAfterA503OfTheSamePushIsFine() {
        let verdict = WireJudge.judge([
            Self.record(0, timestamp: 5, status: 503, reason: "ServiceUnavailable"),
            Self.record(1, timestamp: 5, status: nil),
            Self.record(2, timestamp: 5),
        ])
        #expect(verdict.isClean, "\(verdict)")
        #expect(verdict.wastedPushes == 0)
        #expect(verdict.accepted == 1)
        #expect(verdict.lastAccepted[Self.device]?.sequence == 2)
    }

    @Test func aPushAfterA410IsFlagged() {
        let verdict = WireJudge.judge([
            Self.record(0, timestamp: 5),
            Self.record(1, timestamp: 6, status: 410, reason: "Unregistered"),
            Self.record(2, "device:bb", timestamp: 7),
            Self.record(3, timestamp: 7, status: 410, reason: "Unregistered"),
        ])
        #expect(verdict.sentAfterUnregistered.map(\.record.sequence) == [3])
        #expect(verdict.sentAfterUnregistered.first?.rule == "sent after 410 Unregistered (#1)")
        #expect(verdict.sentAfterUnregistered.first?.description == "#3 device:aa: sent after 410 Unregistered (#1)")
        #expect(verdict.orderingViolations.isEmpty)
        #expect(!verdict.isClean)
    }

    @Test func aPushAfterAnAcceptedEndIsFlaggedButTheEndsResendIsNot() {
        let verdict = WireJudge.judge([
            Self.record(0, timestamp: 5, event: "end", status: 503),
            Self.record(1, timestamp: 6),
            Self.record(2, timestamp: 7, event: "end"),
            Self.record(3, timestamp: 7, event: "end"),
            Self.record(4, "channel:c1", timestamp: 8),
            Self.record(5, timestamp: 8),
        ])
        #expect(verdict.sentAfterEnd.map(\.record.sequence) == [5])
        #expect(verdict.sentAfterEnd.first?.rule == "sent after accepted end 7 (#2)")
        #expect(verdict.orderingViolations.isEmpty)
        #expect(verdict.wastedPushes == 1)
        #expect(!verdict.isClean)
    }

    @Test func convergenceTakesEachTargetsFirstAcceptanceOfTheTimestamp() {
        let since = 1000.0
        let records = [
            Self.record(0, "device:a", timestamp: 7, at: 1000.25, answeredAt: 1000.5),
            Self.record(1, "device:b", timestamp: 6, at: 1000.125),
            // Accepted with no answer time: its arrival counts.
            WireRecord(sequence: 2, arrivedAt: 1001, target: "device:b", timestamp: 8, bodyDigest: "b8", status: 200),
            Self.record(3, "device:b", timestamp: 9, at: 1003),
            Self.record(4, "device:c", timestamp: 7, status: 503, at: 1000.25),
            Self.record(5, "device:d", timestamp: 7, at: 1002),
            Self.record(6, "device:e", timestamp: 7, at: 1000),
        ]
        let convergence = WireJudge.convergence(records, timestamp: 7, since: since, targets: ["device:a", "device:b", "device:c", "device:d"])
        #expect(convergence.delayByTarget == ["device:a": 0.5, "device:b": 1, "device:d": 2])
        #expect(convergence.delays == [0.5, 1, 2])
        #expect(convergence.missing == ["device:c"])
        #expect(!convergence.isComplete)
        #expect(convergence.percentile(0) == 0.5)
        #expect(convergence.percentile(50) == 1)
        #expect(convergence.percentile(99) == 2)
        #expect(convergence.maximum == 2)
    }

    @Test func aTargetThatNeverConvergedIsMissing() {
        let convergence = WireJudge.convergence(
            [Self.record(0, "device:a", timestamp: 6), Self.record(1, "device:b", timestamp: 7, at: 5)],
            timestamp: 7,
            since: 4,
            targets: ["device:a", "device:b", "device:never"]
        )
        #expect(convergence.missing == ["device:a", "device:never"])
        #expect(convergence.delays == [1])
        let none = WireJudge.convergence([], timestamp: 7, since: 0, targets: ["device:a"])
        #expect(none.missing == ["device:a"])
        #expect(none.percentile(50) == nil)
        #expect(none.maximum == nil)
    }
}
