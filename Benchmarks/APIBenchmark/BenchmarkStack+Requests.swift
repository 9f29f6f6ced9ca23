import Foundation
import NIOHTTP1

/// The requests the modes send, and the names and tokens in them: modes that register activities and modes that
/// update them agree on their ids here. Every token is 32 bytes in hex, unique to its kind, run and index.
extension BenchmarkStack {
    /// What a token is for: tokens of different kinds never collide.
    enum TokenKind: Int {
        case registration = 1
        case activity
        case follower
        case importRow
        case warmUp
    }

    /// The attributes type of every registration and feed.
    static let attributesType = "GameAttributes"
    /// The feed of the fan-out, followed by token only.
    static let fanOutFeedKey = "bench-fanout"

    /// A number telling this run's new devices from earlier runs' in the same database: the time in seconds.
    static func runTag() -> Int {
        Int(Date().timeIntervalSince1970)
    }

    /// A token in hex: the kind (2 digits), the run (14) and the index (48).
    static func token(_ kind: TokenKind, run: Int = 0, index: Int) -> String {
        func hex(_ value: Int, digits: Int) -> String {
            let text = String(value, radix: 16)
            return String(repeating: "0", count: max(0, digits - text.count)) + text
        }
        return hex(kind.rawValue, digits: 2) + hex(run, digits: 14) + hex(index, digits: 48)
    }

    /// The key of the `index`th feed with a channel in run `run`: each run makes its own, because each run's
    /// emulator knows only the channels made in that run.
    static func channelFeedKey(_ index: Int, run: Int) -> String {
        "bench-channel-\(run)-\(index)"
    }

    /// `PUT …/push-to-start-tokens/{deviceId}/GameAttributes` for a new device of run `run`.
    func registration(run: Int, index: Int) -> APIRequest {
        let token = Self.token(.registration, run: run, index: index)
        return APIRequest(
            .PUT,
            "\(self.appPath)/push-to-start-tokens/device-\(run)-\(index)/\(Self.attributesType)",
            json: #"{"token":"\#(token)","userId":"user-\#(index)","osVersion":"17.5","frequentUpdatesEnabled":true}"#
        )
    }

    /// `POST …/push-to-start-tokens:import` with `count` rows shaped like ``registration(run:index:)``'s, for devices
    /// `first…` of run `run`.
    func importBatch(run: Int, first: Int, count: Int) -> APIRequest {
        let rows = (first..<first + count).map { index in
            let token = Self.token(.importRow, run: run, index: index)
            return #"{"deviceId":"import-\#(run)-\#(index)","attributesType":"\#(Self.attributesType)","token":"\#(token)","#
                + #""userId":"user-\#(index)","osVersion":"17.5","frequentUpdatesEnabled":true}"#
        }
        return APIRequest(.POST, "\(self.appPath)/push-to-start-tokens:import", json: "[" + rows.joined(separator: ",") + "]")
    }

    /// `PUT …/activities/bench-activity-{index}`: a standalone activity with its own update token.
    func activityRegistration(index: Int) -> APIRequest {
        self.activity("bench-activity-\(index)", token: Self.token(.activity, index: index))
    }

    /// `POST …/activities/bench-activity-{index % activities}/updates`: updates go round the activities, asking for
    /// `priority` when one is given, each with an `Idempotency-Key` of its own when `keyed`.
    func activityUpdate(index: Int, activities: Int, priority: Int?, keyed: Bool) -> APIRequest {
        let priorityMember = priority.map { #","priority":\#($0)"# } ?? ""
        return APIRequest(
            .POST,
            "\(self.appPath)/activities/bench-activity-\(index % activities)/updates",
            json: #"{"contentState":{"eta":\#(index)}\#(priorityMember)}"#,
            headers: keyed ? ["idempotency-key": UUID().uuidString] : [:]
        )
    }

    /// `PUT …/activities/bench-warm-up`: a standalone activity whose update opens serve's connection to APNs.
    func warmUpActivity() -> APIRequest {
        self.activity("bench-warm-up", token: Self.token(.warmUp, index: 0))
    }

    /// `POST …/activities/bench-warm-up/updates`.
    func warmUpUpdate() -> APIRequest {
        APIRequest(.POST, "\(self.appPath)/activities/bench-warm-up/updates", json: #"{"contentState":{"eta":0}}"#)
    }

    /// `PUT …/activities/bench-follower-{index}`: a follower of the fan-out feed with its own update token.
    func follower(index: Int) -> APIRequest {
        self.activity("bench-follower-\(index)", token: Self.token(.follower, index: index), feed: Self.fanOutFeedKey)
    }

    /// `PUT …/feeds/{key}`, with a No Storage broadcast channel or without.
    func feed(_ key: String, channel: Bool) -> APIRequest {
        let channelMember = channel ? #","channel":{"storagePolicy":"noStorage"}"# : ""
        return APIRequest(
            .PUT,
            "\(self.appPath)/feeds/\(key)",
            json: #"{"attributesType":"\#(Self.attributesType)","attributes":{"home":"Giants","away":"Mets"}\#(channelMember)}"#
        )
    }

    /// `POST …/feeds/{key}/updates`.
    func feedUpdate(_ key: String, index: Int) -> APIRequest {
        APIRequest(.POST, "\(self.appPath)/feeds/\(key)/updates", json: #"{"contentState":{"homeScore":\#(index),"awayScore":0}}"#)
    }

    private func activity(_ id: String, token: String, feed: String? = nil) -> APIRequest {
        let feedMember = feed.map { #","feed":"\#($0)""# } ?? ""
        return APIRequest(
            .PUT,
            "\(self.appPath)/activities/\(id)",
            json: #"{"attributesType":"\#(Self.attributesType)","pushToken":"\#(token)"\#(feedMember)}"#
        )
    }
}
