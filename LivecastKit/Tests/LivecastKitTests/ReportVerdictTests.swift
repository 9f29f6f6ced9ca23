import Testing

@testable import LivecastKit

/// Every status and code a registration can get from Livecast, and what the client does with it: retry, hold, or
/// drop with a reason (the table of docs/LIVECASTKIT.md, "What Livecast answers"). No network.
@Suite struct ReportVerdictTests {
    private static let token = LivecastReport(
        .pushToStartToken(attributesType: "GameAttributes", token: "ab", frequentUpdatesEnabled: nil, osVersion: nil)
    )
    private static let activity = LivecastReport(
        .activity(id: "A1", attributesType: "GameAttributes", feed: "game-4711", pushToken: "cd", channelID: nil, osVersion: nil)
    )
    private static let ended = LivecastReport(.activityEnded(id: "A1"))

    private static func verdict(
        _ status: Int,
        _ code: String?,
        field: String? = nil,
        retryAfter: Duration? = nil,
        of report: LivecastReport = Self.token
    ) -> ReportVerdict {
        ReportVerdict(.answered(status: status, retryAfter: retryAfter, code: code, message: "m", field: field), of: report)
    }

    @Test func acknowledgementsAndRemovalsOfWhatIsGoneAreDelivered() {
        #expect(Self.verdict(201, nil) == .delivered(status: 201))
        #expect(Self.verdict(200, nil, of: Self.activity) == .delivered(status: 200))
        #expect(Self.verdict(204, nil, of: Self.ended) == .delivered(status: 204))
        #expect(Self.verdict(404, "not_found", field: "activityId", of: Self.ended) == .delivered(status: 404))
    }

    @Test func whatMaySucceedSoonIsRetried() {
        #expect(ReportVerdict(.unreachable(message: "refused"), of: Self.token) == .retry(after: nil, status: nil, message: "refused"))
        #expect(Self.verdict(429, "rate_limited", retryAfter: .seconds(3)) == .retry(after: .seconds(3), status: 429, message: "m"))
        #expect(Self.verdict(408, "bad_request") == .retry(after: nil, status: 408, message: "m"))
        #expect(Self.verdict(500, "internal_error") == .retry(after: nil, status: 500, message: "m"))
        #expect(Self.verdict(503, "database_unavailable", retryAfter: .seconds(5)) == .retry(after: .seconds(5), status: 503, message: "m"))
        // Two registrations of one device and type, or of one token, at once: the loser is told to retry.
        #expect(Self.verdict(409, "conflict") == .retry(after: nil, status: 409, message: "m"))
        #expect(Self.verdict(409, "conflict", of: Self.activity) == .retry(after: nil, status: 409, message: "m"))
    }

    @Test func whatMaySucceedOnceSomethingChangesIsHeld() {
        #expect(Self.verdict(409, "device_limit_reached", field: "attributesType") == .hold(status: 409, code: "device_limit_reached", message: "m"))
        #expect(
            Self.verdict(409, "device_limit_reached", field: "activityId", of: Self.activity)
                == .hold(status: 409, code: "device_limit_reached", message: "m")
        )
        #expect(Self.verdict(404, "not_found", field: "feed", of: Self.activity) == .hold(status: 404, code: "not_found", message: "m"))
    }

    @Test func whatCanNeverSucceedIsDroppedWithItsReason() {
        func reason(_ verdict: ReportVerdict) -> LivecastEvent.DropReason? {
            if case .refused(_, _, _, let reason) = verdict { reason } else { nil }
        }
        #expect(reason(Self.verdict(401, "unauthenticated")) == .keyRefused)
        #expect(reason(Self.verdict(403, "forbidden")) == .forbidden)
        #expect(reason(Self.verdict(400, "malformed_request")) == .invalid)
        #expect(reason(Self.verdict(400, "device_id_required")) == .invalid)
        #expect(reason(Self.verdict(413, "payload_too_large")) == .invalid)
        #expect(reason(Self.verdict(422, "invalid", field: "token")) == .invalid)
        #expect(reason(Self.verdict(422, "invalid_device_id", field: "Livecast-Device-ID")) == .invalid)
        #expect(reason(Self.verdict(404, "not_found", field: "bundleId")) == .notFound)
        #expect(reason(Self.verdict(404, "not_found", field: "deviceId")) == .notFound)
        #expect(reason(Self.verdict(404, "not_found", field: "activityId", of: Self.activity)) == .notFound)
        #expect(reason(Self.verdict(404, "not_found", field: "channelId", of: Self.activity)) == .notFound)
        #expect(reason(Self.verdict(409, "conflict", field: "activityId", of: Self.activity)) == .activityEnded)
        #expect(reason(Self.verdict(409, "conflict", field: "token")) == .tokenTaken)
        #expect(reason(Self.verdict(409, "conflict", field: "pushToken", of: Self.activity)) == .tokenTaken)
        #expect(reason(Self.verdict(409, "conflict", field: "attributesType", of: Self.activity)) == .conflict)
        #expect(reason(Self.verdict(409, "conflict", field: "channelId", of: Self.activity)) == .conflict)
        #expect(reason(Self.verdict(405, "bad_request")) == .refused)
        #expect(Self.verdict(409, "conflict", field: "token") == .refused(status: 409, code: "conflict", message: "m", reason: .tokenTaken))
    }
}
