import LivecastCore
import LivecastStore

extension Reaper {
    /// The time before which a feed must have ended for its channel to be retired (UNIX seconds).
    func retirementCutoff(_ now: Int) -> Double {
        Double(now) - self.policy.channelRetirementDelay.inSeconds
    }

    /// Deletes the channels of ended feeds at APNs and keeps them in the registry as retired
    /// (``ChannelRegistry/retire(appID:bundleID:channelID:force:)``).
    /// - Returns: How many were retired, and a message per channel APNs refused to delete (tried again next pass).
    func retireChannels(_ app: Reaping.App, now: Int) async throws -> (retired: Int, failures: [String]) {
        let channelIDs = try await self.reaping.channelsToRetire(app.id, endedBefore: self.retirementCutoff(now))
        guard !channelIDs.isEmpty else { return (0, []) }
        let client = try await self.appClients.client(forApp: app.id)
        let bundleID = client.bundleID
        let registry = ChannelRegistry(channels: Channels(client: self.database, logger: self.logger), apns: client.client, logger: self.logger)
        var retired = 0
        var failures: [String] = []
        for channelID in channelIDs {
            do {
                _ = try await registry.retire(appID: app.id, bundleID: bundleID, channelID: channelID, force: true)
                retired += 1
            } catch let error as StoreError {
                failures.append("retiring channel \(channelID): \(error.message)")
            } catch let refusal as APNsRefusal {
                failures.append("retiring channel \(channelID): \(refusal.message)")
            }
        }
        return (retired, failures)
    }
}
