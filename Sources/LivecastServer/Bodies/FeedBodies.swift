import LivecastCore

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
}

/// A feed's `channel` request.
struct FeedChannelBody: Decodable {
    let storagePolicy: String
}
