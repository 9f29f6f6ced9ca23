/// What an answer of Livecast means for the report it answers: done, tried again with backoff, held until something
/// changes, or given up, and then why. A report is given up only for an answer that no later try can change.
///
/// Every status and code a registration can get, and its verdict, is in docs/LIVECASTKIT.md ("What Livecast
/// answers"). Refusals of a user assertion (`403 invalid_user_assertion`, `user_assertion_required`) are handled
/// before this, by the identity binding.
enum ReportVerdict: Equatable {
    /// Done: remembered as acknowledged.
    case delivered(status: Int)
    /// Try again with backoff, no sooner than `after` when Livecast said so.
    case retry(after: Duration?, status: Int?, message: String?)
    /// Kept, and tried again after the longest backoff, or sooner when something may have changed (``LivecastClient/resume()``,
    /// a removal of the device acknowledged, a later report of the same subject).
    case hold(status: Int, code: String?, message: String?)
    /// Final: the report is dropped, for `reason`.
    case refused(status: Int, code: String?, message: String?, reason: LivecastEvent.DropReason)

    init(_ answer: TransportAnswer, of report: LivecastReport) {
        switch answer {
        case .unreachable(let message):
            self = .retry(after: nil, status: nil, message: message)
        case .answered(let status, let retryAfter, let code, let message, let field):
            self = Self.verdict(status: status, retryAfter: retryAfter, code: code, message: message, field: field, of: report)
        }
    }

    private static func verdict(
        status: Int,
        retryAfter: Duration?,
        code: String?,
        message: String?,
        field: String?,
        of report: LivecastReport
    ) -> Self {
        switch status {
        case 200..<300:
            return .delivered(status: status)
        case 404 where report.isRemoval:
            // A removal of what Livecast no longer has (an activity already ended, a token already gone).
            return .delivered(status: status)
        case 408, 429, 500...:
            return .retry(after: retryAfter, status: status, message: message)
        case 409 where field == nil:
            // A registration that lost a race with another of the same device or token: Livecast says to retry.
            return .retry(after: retryAfter, status: status, message: message)
        case 409 where code == "device_limit_reached":
            // The device holds its cap of push-to-start tokens or running activities: room comes when one goes.
            return .hold(status: status, code: code, message: message)
        case 404 where field == "feed":
            // A feed a client key cannot follow: it may not exist yet (Livecast does not say which).
            return .hold(status: status, code: code, message: message)
        case 401:
            return .refused(status: status, code: code, message: message, reason: .keyRefused)
        case 403:
            return .refused(status: status, code: code, message: message, reason: .forbidden)
        case 400, 413, 422:
            return .refused(status: status, code: code, message: message, reason: .invalid)
        case 404:
            return .refused(status: status, code: code, message: message, reason: .notFound)
        case 409 where field == "activityId":
            return .refused(status: status, code: code, message: message, reason: .activityEnded)
        case 409 where field == "token" || field == "pushToken":
            return .refused(status: status, code: code, message: message, reason: .tokenTaken)
        case 409:
            return .refused(status: status, code: code, message: message, reason: .conflict)
        default:
            return .refused(status: status, code: code, message: message, reason: .refused)
        }
    }
}
