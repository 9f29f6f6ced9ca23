import Foundation

/// The HTTP request of a report: method, path under `/v1/apps/{bundleId}` and JSON body, as Livecast's API takes
/// them from a `client` key.
struct ReportRequest: Equatable {
    let method: String
    /// Percent-encoded, after `/v1/apps/{bundleId}`.
    let path: String
    let body: Data?

    /// - Parameter userAssertion: The signed assertion that the report's user is this app's user (sent with its
    ///   `userId`); a registration with a user is sent only with one.
    init(_ report: LivecastReport, deviceID: String, userAssertion: String? = nil) {
        let device = Self.segment(deviceID)
        switch report.content {
        case .pushToStartToken(let type, let token, let frequentUpdatesEnabled, let osVersion, let userID):
            self.method = "PUT"
            self.path = "/push-to-start-tokens/\(device)/\(Self.segment(type))"
            self.body = Self.json(
                PushToStartBody(
                    token: token,
                    osVersion: osVersion,
                    frequentUpdatesEnabled: frequentUpdatesEnabled,
                    userId: userID,
                    userAssertion: userID == nil ? nil : userAssertion
                )
            )
        case .pushToStartTokenRemoval(let type):
            self.method = "DELETE"
            self.path = "/push-to-start-tokens/\(device)/\(Self.segment(type))"
            self.body = nil
        case .activity(let id, let type, let feed, let pushToken, let channelID, let osVersion, let userID, let pending):
            self.method = "PUT"
            self.path = "/activities/\(Self.segment(id))"
            self.body = Self.json(
                ActivityBody(
                    attributesType: type,
                    pushToken: pushToken,
                    channelId: channelID,
                    deviceId: deviceID,
                    feed: feed,
                    osVersion: osVersion,
                    userId: userID,
                    userAssertion: userID == nil ? nil : userAssertion,
                    pending: pending == true ? true : nil
                )
            )
        case .activityEnded(let id):
            self.method = "DELETE"
            self.path = "/activities/\(Self.segment(id))"
            self.body = nil
        case .activityDismissed(let id):
            self.method = "POST"
            self.path = "/activities/\(Self.segment(id))/dismissed"
            self.body = nil
        case .deviceUnregistration:
            self.method = "DELETE"
            self.path = "/devices/\(device)"
            self.body = nil
        }
    }

    private struct PushToStartBody: Encodable {
        let token: String
        let osVersion: String?
        let frequentUpdatesEnabled: Bool?
        let userId: String?
        let userAssertion: String?
    }

    private struct ActivityBody: Encodable {
        let attributesType: String
        let pushToken: String?
        let channelId: String?
        let deviceId: String
        let feed: String?
        let osVersion: String?
        let userId: String?
        let userAssertion: String?
        /// `true` for an activity the app scheduled that has not started yet; absent otherwise.
        let pending: Bool?
    }

    private static func json(_ body: some Encodable) -> Data? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try? encoder.encode(body)
    }

    /// One path segment, percent-encoded (a channel id's `/` included).
    private static func segment(_ value: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/;?#%")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }
}
