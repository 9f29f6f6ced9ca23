import HTTPTypes

extension APIError {
    /// 503: PostgreSQL does not answer (``DatabaseWatch``); nothing was done, so the request may be sent again.
    static let databaseUnavailable = APIError(
        .serviceUnavailable,
        code: "database_unavailable",
        "the database does not answer; nothing was changed, retry later",
        headers: [.retryAfter: "5"]
    )

    /// 503: the connection was lost while PostgreSQL committed the request's work, and it could not say afterwards
    /// whether the commit was made (``LivecastStore/CommitInDoubt``).
    static let commitInDoubt = APIError(
        .serviceUnavailable,
        code: "database_unavailable",
        "the database went away while committing this request and cannot tell whether it was kept; retry later with the same Idempotency-Key",
        headers: [.retryAfter: "5"]
    )

    /// 503: the request waited on the database longer than allowed (every pool connection busy, a statement over
    /// the statement timeout, or a lock held too long); retrying later is safe, with the same `Idempotency-Key`.
    static let databaseTimedOut = APIError(
        .serviceUnavailable,
        code: "database_unavailable",
        "the database is busy and did not answer in time; retry later",
        headers: [.retryAfter: "5"]
    )

    /// 503: the database went away during a bulk import, after its first `rows` rows were handled (imported or
    /// refused) in transactions of their own; sending the rows again is safe, the imported ones answer `unchanged`.
    static func importInterrupted(after rows: Int, of total: Int) -> APIError {
        APIError(
            .serviceUnavailable,
            code: "database_unavailable",
            "the database went away after the first \(rows) of \(total) rows were handled, and those stay imported; send the rows again later (the imported ones answer unchanged)",
            headers: [.retryAfter: "5"]
        )
    }
}
