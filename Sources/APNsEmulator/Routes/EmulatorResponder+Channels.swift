import Foundation
import LivecastCore
import NIOCore

extension EmulatorResponder {
    /// `POST`, `GET` and `DELETE /1/apps/{bundleId}/channels` (APNS-REFERENCE §1.3).
    func channel(_ request: EmulatorRequest, bundleID: String) -> Result<EmulatorResponse, APNsFailure> {
        Result { () throws(APNsFailure) -> EmulatorResponse in
            try self.checkBroadcastTopic(bundleID)
            if request.method == "POST" {
                let policy = try Self.createRequestPolicy(request.body)
                let channel = try self.state.withLock { contents throws(APNsFailure) in
                    try contents.channels.create(bundleID: bundleID, storagePolicy: policy)
                }
                return EmulatorResponse(status: 201, headers: [("apns-channel-id", channel.id)])
            }
            guard let channelID = try Self.uniqueHeader(request, "apns-channel-id") else {
                throw APNsFailure(400, "MissingChannelId")
            }
            guard ChannelStore.isWellFormed(channelID) else { throw APNsFailure(400, "BadChannelId") }
            if request.method == "DELETE" {
                let deleted = self.state.withLock { $0.channels.delete(channelID, bundleID: bundleID) }
                guard deleted else { throw APNsFailure(400, "ChannelNotRegistered") }
                return EmulatorResponse(status: 204)
            }
            guard let channel = self.state.withLock({ $0.channels.channel(channelID, bundleID: bundleID) }) else {
                throw APNsFailure(400, "ChannelNotRegistered")
            }
            return EmulatorResponse(
                status: 200,
                headers: [("content-type", "application/json")],
                body: ByteBuffer(string: #"{"message-storage-policy":\#(channel.storagePolicy),"push-type":"LiveActivity"}"#)
            )
        }
    }

    /// `GET /1/apps/{bundleId}/all-channels`.
    func allChannels(bundleID: String) -> Result<EmulatorResponse, APNsFailure> {
        Result { () throws(APNsFailure) -> EmulatorResponse in
            try self.checkBroadcastTopic(bundleID)
            let ids = self.state.withLock { $0.channels.ids(bundleID: bundleID) }
            return .json(["channels": ids])
        }
    }

    /// Reads `{"message-storage-policy": 0|1, "push-type": "LiveActivity"}`.
    private static func createRequestPolicy(_ body: ByteBuffer) throws(APNsFailure) -> Int {
        guard body.readableBytes > 0,
            let object = try? JSONDecoder().decode([String: JSONValue].self, from: Data(body.readableBytesView))
        else { throw APNsFailure(400, "BadRequestPayload") }
        let known: Set<String> = ["message-storage-policy", "push-type"]
        guard Set(object.keys).isSubset(of: known), let pushType = object["push-type"]?.stringValue,
            case .int(let policy) = object["message-storage-policy"], policy == 0 || policy == 1
        else { throw APNsFailure(400, "BadRequestParams") }
        guard pushType == "LiveActivity" else { throw APNsFailure(400, "InvalidPushType") }
        return policy
    }
}
