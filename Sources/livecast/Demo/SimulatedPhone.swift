import APNsEmulator
import Foundation
import LivecastKit
import Synchronization

/// The demo app on one simulated iPhone: it reports its device's tokens and activities to Livecast through
/// LivecastKit's core and a `client` key, as a real app does with `Livecast.observe(…)`.
///
/// The emulator's device stands in for ActivityKit: its snapshot is read every 50 ms and turned into the sequences
/// ActivityKit would yield (each push-to-start token, each activity's update tokens and its end and dismissal),
/// which ``LivecastClient``'s `observe` takes. The emulator itself knows nothing of LivecastKit.
final class SimulatedPhone: Sendable {
    /// What Livecast acknowledged or refused so far.
    private struct Reports {
        var pushToStartTypes: Set<String> = []
        var activities: Set<String> = []
        var dropped: [LivecastEvent] = []
    }

    private final class Shared: Sendable {
        let reports = Mutex(Reports())
    }

    let deviceID: String
    private let shared = Shared()
    private let watch: Task<Void, Never>

    /// Starts the app: its client (on `storeDirectory`) and the watch over its device.
    /// - Parameter feed: The feed key its activities follow (a real app reads it from the activity's attributes).
    init(deviceID: String, osVersion: String, emulator: APNsEmulator, configuration base: LivecastClient.Configuration, feed: String) throws {
        var configuration = base
        configuration.deviceID = deviceID
        configuration.osVersion = osVersion
        configuration.storeDirectory = base.storeDirectory.appendingPathComponent(deviceID, isDirectory: true)
        let client = try LivecastClient(configuration: configuration)
        let shared = self.shared
        self.deviceID = deviceID
        self.watch = Task {
            await withDiscardingTaskGroup { group in
                group.addTask { await Self.record(client.events, into: shared) }
                await Self.watch(deviceID, on: emulator, client: client, feed: feed, in: &group)
                await client.shutdown()
            }
        }
    }

    /// Whether Livecast acknowledged the push-to-start token of every type the device has.
    func hasReportedPushToStartTokens(of types: some Sequence<String>) -> Bool {
        self.shared.reports.withLock { reports in types.allSatisfy { reports.pushToStartTypes.contains($0) } }
    }

    /// Whether Livecast acknowledged a registration of every one of these activities.
    func hasReportedActivities(_ ids: some Sequence<String>) -> Bool {
        self.shared.reports.withLock { reports in ids.allSatisfy { reports.activities.contains($0) } }
    }

    /// The reports Livecast refused.
    var dropped: [LivecastEvent] { self.shared.reports.withLock { $0.dropped } }

    /// Stops the app: the watch and its client.
    func stop() async {
        self.watch.cancel()
        await self.watch.value
    }

    private static func record(_ events: AsyncStream<LivecastEvent>, into shared: Shared) async {
        for await event in events {
            shared.reports.withLock { reports in
                if event.kind == .dropped { reports.dropped.append(event) }
                guard event.kind == .delivered else { return }
                if let activityID = event.report?.activityID {
                    reports.activities.insert(activityID)
                } else if let type = event.report?.attributesType {
                    reports.pushToStartTypes.insert(type)
                }
            }
        }
    }

    /// Reads the device until cancelled, and feeds what changes to the client's observations.
    private static func watch(
        _ deviceID: String,
        on emulator: APNsEmulator,
        client: LivecastClient,
        feed: String,
        in group: inout DiscardingTaskGroup
    ) async {
        var pushToStart: [String: (token: String, sink: AsyncStream<Data>.Continuation)] = [:]
        var activities:
            [String: (
                token: String?, state: ActivitySnapshot.State, tokens: AsyncStream<Data>.Continuation,
                states: AsyncStream<LivecastActivityState>.Continuation
            )] = [:]
        defer {
            for entry in pushToStart.values { entry.sink.finish() }
            for entry in activities.values {
                entry.tokens.finish()
                entry.states.finish()
            }
        }
        while !Task.isCancelled, let device = emulator.device(id: deviceID) {
            for (type, token) in device.pushToStartTokens where pushToStart[type]?.token != token {
                let sink: AsyncStream<Data>.Continuation
                if let known = pushToStart[type] {
                    sink = known.sink
                } else {
                    let (tokens, newSink) = AsyncStream.makeStream(of: Data.self)
                    group.addTask { await client.observe(pushToStartTokens: tokens, attributesType: type) }
                    sink = newSink
                }
                pushToStart[type] = (token, sink)
                sink.yield(Data(hexToken: token))
            }
            for activity in device.activities {
                guard var entry = activities[activity.id] else {
                    let (tokens, tokenSink) = AsyncStream.makeStream(of: Data.self)
                    let (states, stateSink) = AsyncStream.makeStream(of: LivecastActivityState.self)
                    let reported = LivecastActivity(id: activity.id, attributesType: activity.attributesType, feed: feed)
                    group.addTask { await client.observe(activity: reported, channelID: activity.channelId, updateTokens: tokens, states: states) }
                    activities[activity.id] = (nil, .active, tokenSink, stateSink)
                    Self.follow(activity, &activities[activity.id]!)
                    continue
                }
                Self.follow(activity, &entry)
                activities[activity.id] = entry
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Yields an activity's new update token and state, as ActivityKit's `pushTokenUpdates` and
    /// `activityStateUpdates` would.
    private static func follow(
        _ activity: ActivitySnapshot,
        _ entry:
            inout (
                token: String?, state: ActivitySnapshot.State, tokens: AsyncStream<Data>.Continuation,
                states: AsyncStream<LivecastActivityState>.Continuation
            )
    ) {
        if let token = activity.updateToken, token != entry.token {
            entry.token = token
            entry.tokens.yield(Data(hexToken: token))
        }
        guard activity.state != entry.state else { return }
        entry.state = activity.state
        switch activity.state {
        case .ended: entry.states.yield(.ended)
        case .dismissed, .lost: entry.states.yield(.dismissed)
        case .active: entry.states.yield(.active)
        }
    }
}

extension Data {
    /// The bytes of a hex token (the emulator's tokens are lowercase hex).
    fileprivate init(hexToken: String) {
        var bytes: [UInt8] = []
        var digits = hexToken.makeIterator()
        while let high = digits.next(), let low = digits.next(), let byte = UInt8(String([high, low]), radix: 16) {
            bytes.append(byte)
        }
        self.init(bytes)
    }
}
