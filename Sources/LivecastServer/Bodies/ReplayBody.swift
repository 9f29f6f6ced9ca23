import Hummingbird

/// `POST /v1/apps/{bundleId}/dead-letters/{deadLetterId}/replay`.
struct ReplayBody: ResponseEncodable {
    let deadLetterId: Int64
    /// `requeued`, `superseded` or `targetGone`.
    let outcome: String
}
