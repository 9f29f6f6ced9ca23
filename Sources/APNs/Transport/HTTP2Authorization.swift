/// Where connections get the `authorization` header they send. The layer above keeps it current (for APNs, the
/// provider token) and so decides how often it changes; a connection asks before each round of admissions and
/// notes on each exchange the value it went out with (``HTTP2Exchange/authorization``).
protocol HTTP2Authorization: Sendable {
    /// The value to send now.
    func headerValue() -> String
}
