import Foundation
import Testing

@testable import LivecastKit

/// The pending file, what is not sent twice, and the order reports go in: no network.
@Suite struct PendingStoreTests {
    private static func token(_ type: String, _ token: String, frequent: Bool? = nil) -> LivecastReport {
        LivecastReport(.pushToStartToken(attributesType: type, token: token, frequentUpdatesEnabled: frequent, osVersion: "18.2"))
    }

    private static func activity(_ id: String, token: String? = nil, channel: String? = nil) -> LivecastReport {
        LivecastReport(.activity(id: id, attributesType: "GameAttributes", feed: "game-4711", pushToken: token, channelID: channel, osVersion: nil))
    }

    @Test func theStateSurvivesARelaunchAndTheFileIsReplacedWhole() throws {
        let directory = try TemporaryDirectory()
        let store = try PendingStore(directory: directory.url.appendingPathComponent("nested/Livecast"))
        guard case .new(var state) = store.load(deviceID: nil) else {
            Issue.record("no file: a new state")
            return
        }
        #expect(UUID(uuidString: state.deviceID) != nil, "a new random device id")
        let tokenQueued = state.enqueue(Self.token("GameAttributes", "aa"), now: Date())
        let activityQueued = state.enqueue(Self.activity("A1", token: "bb"), now: Date())
        #expect(tokenQueued && activityQueued)
        state.finish(sequence: 0, acknowledged: true, now: Date())
        try store.save(state)

        guard case .kept(let again) = try PendingStore(directory: directory.url.appendingPathComponent("nested/Livecast")).load(deviceID: nil) else {
            Issue.record("the file is read back")
            return
        }
        #expect(again == state)
        #expect(again.pending.map(\.report) == [Self.activity("A1", token: "bb")])
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.url.appendingPathComponent("nested/Livecast").path)
        #expect(files == [PendingStore.fileName], "no temporary file is left beside it")

        guard case .kept(let other) = store.load(deviceID: "other-device") else {
            Issue.record("another id")
            return
        }
        #expect(other.pending.isEmpty && other.deviceID == "other-device", "another configured device id starts afresh")
        try Data("{not json".utf8).write(to: store.fileURL)
        guard case .unreadable(let reason) = store.load(deviceID: nil) else {
            Issue.record("an undecodable file is unreadable")
            return
        }
        #expect(reason.contains("cannot be decoded"))
        #expect(try Data(contentsOf: store.fileURL) == Data("{not json".utf8), "and left as it is")
    }

    @Test func anUnchangedTokenIsNotQueuedTwice() {
        var state = PendingState(deviceID: "d")
        let now = Date()
        let queued1 = state.enqueue(Self.token("GameAttributes", "aa"), now: now)
        #expect(queued1)
        let queued2 = state.enqueue(Self.token("GameAttributes", "aa"), now: now)
        #expect(!queued2, "the same as the pending one")
        state.finish(sequence: 0, acknowledged: true, now: now)
        let queued3 = state.enqueue(Self.token("GameAttributes", "aa"), now: now)
        #expect(!queued3, "the same as the acknowledged one")
        let queued4 = state.enqueue(Self.token("GameAttributes", "aa", frequent: false), now: now)
        #expect(queued4, "a changed setting is news")
        let queued5 = state.enqueue(Self.token("GameAttributes", "bb"), now: now)
        #expect(queued5)
        let queued6 = state.enqueue(Self.token("GameAttributes", "aa"), now: now)
        #expect(queued6, "back to a token after another is news")
        let queued7 = state.enqueue(Self.token("OrderAttributes", "aa"), now: now)
        #expect(queued7, "another type is another subject")

        let queued8 = state.enqueue(Self.activity("A1", token: "cc"), now: now)
        #expect(queued8)
        let queued9 = state.enqueue(Self.activity("A1"), now: now)
        #expect(!queued9, "no token says nothing new of a reported activity")
        let queued10 = state.enqueue(LivecastReport(.activityEnded(id: "A1")), now: now)
        #expect(queued10)
        let queued11 = state.enqueue(Self.activity("A1", token: "dd"), now: now)
        #expect(!queued11, "nothing is registered after the end")
        let queued12 = state.enqueue(LivecastReport(.activityDismissed(id: "A1")), now: now)
        #expect(queued12)
    }

    @Test func anAcknowledgedUnregistrationForgetsEverythingAndOldActivitiesAreForgotten() {
        var state = PendingState(deviceID: "d")
        let then = Date(timeIntervalSinceNow: -2 * PendingState.activityMemory)
        _ = state.enqueue(Self.activity("old", token: "aa"), now: then)
        state.finish(sequence: 0, acknowledged: true, now: then)
        _ = state.enqueue(Self.token("GameAttributes", "bb"), now: then)
        state.finish(sequence: 1, acknowledged: true, now: then)
        state.forgetOldActivities(now: Date())
        #expect(Set(state.acknowledged.keys) == ["push-to-start/GameAttributes"])

        _ = state.enqueue(LivecastReport(.deviceUnregistration), now: Date())
        state.finish(sequence: 2, acknowledged: true, now: Date())
        #expect(state.acknowledged.isEmpty)
        let queuedAgain = state.enqueue(Self.token("GameAttributes", "bb"), now: Date())
        #expect(queuedAgain, "registered again after the unregistration")
    }

    @Test func eachLaneGoesInOrderAndTheDeviceLaneIsABarrier() {
        var state = PendingState(deviceID: "d")
        for report in [
            Self.activity("A1", token: "01"), Self.activity("A2", token: "02"), Self.activity("A1", token: "03"),
            Self.token("GameAttributes", "04"), LivecastReport(.deviceUnregistration), Self.token("GameAttributes", "05"),
        ] {
            _ = state.enqueue(report, now: Date())
        }
        let first = ReportSchedule.startable(state.pending, busy: [])
        #expect(first.map(\.sequence) == [0, 1, 3], "one per lane, the device's after everything before it")
        #expect(ReportSchedule.startable(state.pending, busy: [.activity(id: "A1")]).map(\.sequence) == [1, 3])
        for sequence in [0, 1, 3] { state.finish(sequence: sequence, acknowledged: true, now: Date()) }
        #expect(ReportSchedule.startable(state.pending, busy: []).map(\.sequence) == [2], "the unregistration waits for A1")
        state.finish(sequence: 2, acknowledged: true, now: Date())
        #expect(ReportSchedule.startable(state.pending, busy: []).map(\.sequence) == [4])
        state.finish(sequence: 4, acknowledged: true, now: Date())
        #expect(ReportSchedule.startable(state.pending, busy: []).map(\.sequence) == [5], "what came after goes after")
    }

    @Test func requestsFollowTheAPI() throws {
        let register = ReportRequest(Self.token("GameAttributes", "aa", frequent: true), deviceID: "dev 1")
        #expect(register.method == "PUT" && register.path == "/push-to-start-tokens/dev%201/GameAttributes")
        #expect(String(decoding: try #require(register.body), as: UTF8.self) == #"{"frequentUpdatesEnabled":true,"osVersion":"18.2","token":"aa"}"#)
        let activity = ReportRequest(Self.activity("A/1", channel: "c2=="), deviceID: "d")
        #expect(activity.method == "PUT" && activity.path == "/activities/A%2F1")
        #expect(
            String(decoding: try #require(activity.body), as: UTF8.self)
                == #"{"attributesType":"GameAttributes","channelId":"c2==","deviceId":"d","feed":"game-4711"}"#
        )
        let pending = ReportRequest(
            LivecastReport(
                .activity(id: "A1", attributesType: "GameAttributes", feed: nil, pushToken: "ab", channelID: nil, osVersion: nil, pending: true)
            ),
            deviceID: "d"
        )
        #expect(
            String(decoding: try #require(pending.body), as: UTF8.self)
                == #"{"attributesType":"GameAttributes","deviceId":"d","pending":true,"pushToken":"ab"}"#
        )
        let ended = ReportRequest(LivecastReport(.activityEnded(id: "A1")), deviceID: "d")
        #expect(ended.method == "DELETE" && ended.path == "/activities/A1" && ended.body == nil)
        #expect(ReportRequest(LivecastReport(.activityDismissed(id: "A1")), deviceID: "d").path == "/activities/A1/dismissed")
        let unregistration = ReportRequest(LivecastReport(.deviceUnregistration), deviceID: "d")
        #expect(unregistration.method == "DELETE" && unregistration.path == "/devices/d" && unregistration.body == nil)
        #expect(Data([0x00, 0xAB, 0x7F]).hexString == "00ab7f")
    }
}
