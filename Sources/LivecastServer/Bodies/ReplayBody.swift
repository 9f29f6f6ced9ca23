/// `POST /v1/apps/{bundleId}/dead-letters/{deadLetterId}/replay`.
struct ReplayBody: Encodable {
    let deadLetterId: Int64
    /// `requeued`, `superseded` or `targetGone`.
    let outcome: String
}
