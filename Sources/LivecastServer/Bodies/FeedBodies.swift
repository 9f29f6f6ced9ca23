import LivecastCore
import LivecastStore

/// `PUT /v1/apps/{bundleId}/feeds/{feedKey}`.
struct FeedBody: Decodable {
    let attributesType: String
    /// The static `ActivityAttributes`, a JSON object.
    let attributes: RawJSON
    /// Give the feed a broadcast channel, if it has none.
    let channel: FeedChannelBody?
    let staleAfterSeconds: Int?
    /// Seconds after its `stale-date` before the reaper ends the feed; the reaper's `--stale-grace` when absent.
    let staleGraceSeconds: Int?
    /// Renew the followers' activities before the activity lifetime; absent: they end with it.
    let renewal: RenewalBody?
}

/// A feed's `renewal`: `{"before": 1800, "ifUpdatedWithin": 7200, "alert": …}`.
struct RenewalBody: Decodable {
    /// Seconds before the activity lifetime's end that the renewal goes out.
    let before: Int
    /// The feed must have been updated within this many seconds for its followers to be renewed.
    let ifUpdatedWithin: Int
    /// The alert the renewal shows; the feed's latest start's, without its sound, when absent.
    let alert: AlertBody?

    /// The store's renewal policy.
    /// - Throws: ``APIError`` `422 invalid` for a `before` not shorter than the activity lifetime, or a count of
    ///   seconds out of bounds.
    func renewal(activityLifetime: Duration) throws -> Feeds.Renewal {
        let lifetime = Int(activityLifetime.wholeSeconds)
        guard (1..<lifetime).contains(self.before) else {
            throw APIError.invalid(
                "renewal.before must be from 1 to \(lifetime - 1) seconds, less than the activity lifetime",
                field: "renewal.before"
            )
        }
        try InputLimits.checkSeconds(self.ifUpdatedWithin, in: InputLimits.renewalIfUpdatedWithin, field: "renewal.ifUpdatedWithin")
        return Feeds.Renewal(before: .seconds(self.before), ifUpdatedWithin: .seconds(self.ifUpdatedWithin), alert: self.alert?.alert)
    }
}

/// A feed's `channel` request.
struct FeedChannelBody: Decodable {
    let storagePolicy: String
}
