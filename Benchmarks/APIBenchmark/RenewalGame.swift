import APNsEmulator
import Foundation
import NIOHTTP1
import Synchronization

/// The renewal game through the API: the feed, the iPhones and their apps, the updates, the kill, the end. The apps
/// report what their iPhones show, as LivecastKit does: every new activity with its token or channel, a swipe as a
/// dismissal, and a push-to-start token gone.
final class RenewalGame: Sendable {
    /// An iPhone of the game and what its user does.
    struct Phone: Sendable {
        enum Role: String, Sendable {
            case tokenFollower, channelFollower, dismissing, tokenless
        }

        var deviceID: String
        var osVersion: String
        var pushToStartToken: String
        var role: Role
    }

    /// What the game left to judge.
    struct Played: Sendable {
        /// The end's content state, as the wire log writes it.
        var finalContentState: String
        /// The targets that should show the end: the channel, and the newest activity's token of each token follower.
        var finalTargets: Set<String>
    }

    let stack: GameNightStack
    let sizes: RenewalSizes
    let instances: Int
    let feedKey = "renewal-\(BenchmarkStack.runTag())"
    /// The phones, made before the game.
    let phones: Mutex<[Phone]> = Mutex([])
    /// When each activity was reported, by its id: a token follower's old one must end after its successor's report.
    let reportedAt: Mutex<[String: Double]> = Mutex([:])
    /// Calls that failed after their retries, with the first failure.
    let failures: Mutex<(count: Int, first: String?)> = Mutex((0, nil))
    private let turn = Atomic<Int>(0)

    init(stack: GameNightStack, sizes: RenewalSizes, instances: Int) {
        self.stack = stack
        self.sizes = sizes
        self.instances = instances
    }

    /// Plays the game. - Throws: ``BenchmarkFailure`` when the feed or the phones cannot be set up.
    func play() async throws -> Played {
        let channelID = try await self.createFeed()
        try await self.addPhones()
        try await self.call(
            .POST,
            "feeds/\(self.feedKey)/start",
            #"{"contentState":{"home":0},"alert":{"title":"Kick-off"},"audience":{"everyone":true}}"#,
            what: "starting the feed"
        )
        let clock = ContinuousClock()
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                while !Task.isCancelled {
                    await self.reportWhatThePhonesShow()
                    try? await Task.sleep(for: .milliseconds(500))
                }
            }
            group.addTask {
                try await clock.sleep(until: start + .seconds(self.sizes.killAt))
                await self.stack.kill(1)
                RenewalCommand.note("instance 1 killed (SIGKILL) during the renewals")
                try await clock.sleep(until: start + .seconds(self.sizes.killAt + self.sizes.restartAfter))
                try await self.stack.start(1)
                RenewalCommand.note("instance 1 started again")
            }
            for update in 1...(self.sizes.seconds / 2) {
                try await clock.sleep(until: start + .seconds(update * 2))
                _ = try? await self.call(.POST, "feeds/\(self.feedKey)/updates", #"{"contentState":{"home":\#(update)}}"#, what: "updating the feed")
            }
            try await self.call(.POST, "feeds/\(self.feedKey)/end", #"{"contentState":{"home":-1}}"#, what: "ending the feed")
            // The apps go on reporting, as they would: a renewal that reached an iPhone just before the end is
            // reported after it, and must show the end too.
            try await Task.sleep(for: .seconds(2))
            let deadline = clock.now + .seconds(15)
            while self.unreportedActivities() > 0, clock.now < deadline { try await Task.sleep(for: .milliseconds(500)) }
            group.cancelAll()
            try await group.waitForAll()
        }
        var targets: Set<String> = ["channel:\(channelID)"]
        for phone in self.phones.withLock({ $0 }) where phone.role == .tokenFollower {
            if let token = self.stack.emulator.device(id: phone.deviceID)?.activities.last?.updateToken { targets.insert("device:\(token)") }
        }
        return Played(finalContentState: #"{"home":-1}"#, finalTargets: targets)
    }

    // MARK: Setup

    private func createFeed() async throws -> String {
        let renewal = #""renewal":{"before":\#(self.sizes.before),"ifUpdatedWithin":600}"#
        let body =
            #"{"attributesType":"\#(BenchmarkStack.attributesType)","attributes":{"home":"Giants"},"channel":{"storagePolicy":"noStorage"},\#(renewal)}"#
        let answer = try await self.call(.PUT, "feeds/\(self.feedKey)", body, what: "creating the feed")
        struct Feed: Decodable { var channelId: String? }
        guard let channelID = try? JSONDecoder().decode(Feed.self, from: Data(answer.utf8)).channelId else {
            throw BenchmarkFailure("the feed has no channel: \(answer)")
        }
        return channelID
    }

    /// Adds the iPhones to the emulator and registers their push-to-start tokens, as their apps would.
    private func addPhones() async throws {
        let roles: [(Phone.Role, Int, String)] = [
            (.tokenFollower, self.sizes.tokenFollowers, "17.5"), (.channelFollower, self.sizes.channelFollowers, "18.2"),
            (.dismissing, self.sizes.dismissing, "17.5"), (.tokenless, self.sizes.tokenless, "17.5"),
        ]
        var phones: [Phone] = []
        for (role, count, osVersion) in roles {
            for _ in 0..<count {
                let device = try self.stack.emulator.addDevice(
                    bundleID: String(self.stack.appPath.dropFirst("/v1/apps/".count)),
                    osVersion: osVersion,
                    pushToStartTokens: [BenchmarkStack.attributesType: ""]
                )
                let token = device.pushToStartTokens[BenchmarkStack.attributesType] ?? ""
                try await self.call(
                    .PUT,
                    "push-to-start-tokens/\(device.id)/\(BenchmarkStack.attributesType)",
                    #"{"token":"\#(token)","osVersion":"\#(osVersion)"}"#,
                    what: "registering a push-to-start token"
                )
                phones.append(Phone(deviceID: device.id, osVersion: osVersion, pushToStartToken: token, role: role))
            }
        }
        self.phones.withLock { $0 = phones }
    }

    // MARK: The apps

    /// Each app reports the activities its iPhone shows that it has not reported yet; a swiping user dismisses the
    /// first one, and a token-less iPhone's push-to-start token goes once it started.
    private func reportWhatThePhonesShow() async {
        for phone in self.phones.withLock({ $0 }) {
            for activity in self.stack.emulator.device(id: phone.deviceID)?.activities ?? [] where activity.state == .active {
                guard self.reportedAt.withLock({ $0[activity.id] }) == nil else { continue }
                let address = activity.channelId.map { #""channelId":"\#($0)""# } ?? #""pushToken":"\#(activity.updateToken ?? "")""#
                let body =
                    #"{"attributesType":"\#(BenchmarkStack.attributesType)","feed":"\#(self.feedKey)",\#(address),"deviceId":"\#(phone.deviceID)","osVersion":"\#(phone.osVersion)"}"#
                guard (try? await self.call(.PUT, "activities/\(activity.id)", body, what: "reporting an activity")) != nil else { continue }
                self.reportedAt.withLock { $0[activity.id] = Date().timeIntervalSince1970 }
                switch phone.role {
                case .dismissing:
                    _ = self.stack.emulator.loseActivity(deviceID: phone.deviceID, activityID: activity.id)
                    _ = try? await self.call(.POST, "activities/\(activity.id)/dismissed", nil, what: "reporting a dismissal")
                case .tokenless:
                    _ = try? await self.call(
                        .DELETE,
                        "push-to-start-tokens/\(phone.deviceID)/\(BenchmarkStack.attributesType)",
                        nil,
                        what: "deleting a push-to-start token"
                    )
                case .tokenFollower, .channelFollower:
                    break
                }
            }
        }
    }

    /// How many activities the iPhones show that their apps have not reported yet.
    private func unreportedActivities() -> Int {
        let reported = self.reportedAt.withLock { Set($0.keys) }
        return self.phones.withLock { $0 }.reduce(0) { count, phone in
            let shown = self.stack.emulator.device(id: phone.deviceID)?.activities ?? []
            return count + shown.count { $0.state == .active && !reported.contains($0.id) }
        }
    }

    /// Calls `METHOD /v1/apps/{bundleId}/PATH` on the instances in turn. - Returns: the answer's body.
    /// - Throws: ``BenchmarkFailure`` when it fails after its retries (counted in ``failures``).
    @discardableResult
    private func call(_ method: HTTPMethod, _ path: String, _ body: String?, what: String) async throws -> String {
        let instance = self.turn.add(1, ordering: .relaxed).newValue % self.instances
        let answer = await self.stack.client.call(APIRequest(method, "\(self.stack.appPath)/\(path)", json: body), on: instance)
        guard answer.isSuccess else {
            self.failures.withLock { failures in
                failures.count += 1
                if failures.first == nil { failures.first = "\(what): \(answer.description)" }
            }
            throw BenchmarkFailure("\(what) answered \(answer.description)")
        }
        return answer.body
    }
}
