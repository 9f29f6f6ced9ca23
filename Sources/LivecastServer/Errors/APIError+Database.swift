extension APIError {
    /// 503: PostgreSQL does not answer (``DatabaseWatch``); nothing was done, so the request may be sent again.
    static let databaseUnavailable = APIError(
        .serviceUnavailable,
        code: "database_unavailable",
        "the database does not answer; nothing was changed, retry later",
        headers: [.retryAfter: "5"]
    )
}
