import Foundation

/// The broadcast channels the emulator knows, per bundle id, with APNs' rules: random base64 ids that are never
/// reused, an immutable storage policy, and a cap per app (10,000 by default).
///
/// Not thread-safe by itself; ``EmulatorState`` guards it.
struct ChannelStore {
    /// One channel.
    struct Channel: Hashable, Codable, Sendable {
        /// The base64 id APNs chose.
        var id: String
        /// The bundle id the channel belongs to.
        var bundleID: String
        /// `0` No Message Stored, `1` Most Recent Message Stored.
        var storagePolicy: Int
        /// The last broadcast stored for offline devices (policy 1 only), and when it expires (seconds since 1970).
        var storedMessage: StoredMessage?
    }

    /// A broadcast kept for devices that are offline (policy 1).
    struct StoredMessage: Hashable, Codable, Sendable {
        var payload: String
        var expiresAt: Int
    }

    /// How many channels one app may have.
    let limit: Int
    private var channels: [String: Channel] = [:]
    private var issuedIDs: Set<String> = []
    private var countByBundleID: [String: Int] = [:]

    init(limit: Int) {
        self.limit = limit
    }

    /// Creates a channel with a new random id.
    /// - Throws: `CannotCreateChannelConfig` (400) when the app is at the cap.
    mutating func create(bundleID: String, storagePolicy: Int) throws(APNsFailure) -> Channel {
        guard self.countByBundleID[bundleID, default: 0] < self.limit else {
            throw APNsFailure(400, "CannotCreateChannelConfig")
        }
        var id: String
        repeat {
            // Apple says not to assume the id's size, so the emulator varies it.
            let length = Int.random(in: 12...24)
            id = Data((0..<length).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        } while self.issuedIDs.contains(id)
        self.issuedIDs.insert(id)
        let channel = Channel(id: id, bundleID: bundleID, storagePolicy: storagePolicy, storedMessage: nil)
        self.channels[id] = channel
        self.countByBundleID[bundleID, default: 0] += 1
        return channel
    }

    /// The channel with this id, if it exists and belongs to the bundle id.
    func channel(_ id: String, bundleID: String) -> Channel? {
        guard let channel = self.channels[id], channel.bundleID == bundleID else { return nil }
        return channel
    }

    /// Deletes a channel. - Returns: whether it existed in that app.
    mutating func delete(_ id: String, bundleID: String) -> Bool {
        guard self.channel(id, bundleID: bundleID) != nil else { return false }
        self.channels[id] = nil
        self.countByBundleID[bundleID, default: 1] -= 1
        return true
    }

    /// The ids of an app's channels, sorted.
    func ids(bundleID: String) -> [String] {
        self.channels.values.filter { $0.bundleID == bundleID }.map(\.id).sorted()
    }

    /// Every channel, for the control plane.
    var all: [Channel] {
        self.channels.values.sorted { $0.id < $1.id }
    }

    /// Keeps a policy-1 channel's latest broadcast until it expires.
    mutating func store(_ payload: String, expiresAt: Int, in id: String) {
        self.channels[id]?.storedMessage = StoredMessage(payload: payload, expiresAt: expiresAt)
    }

    /// Whether a channel id is well-formed base64 of a sane length.
    static func isWellFormed(_ id: String) -> Bool {
        id.count <= 256 && !id.isEmpty && Data(base64Encoded: id) != nil
    }
}
