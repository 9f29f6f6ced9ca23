import Hummingbird
import LivecastService
import LivecastStore

extension APIError {
    /// The one place where the store's refusals become HTTP statuses.
    init(_ error: StoreError) {
        let status: HTTPResponse.Status
        switch error.code {
        case .notFound: status = .notFound
        case .invalid, .idempotencyKeyReused: status = .unprocessableContent
        case .conflict, .staleTimestamp, .activityEnded, .feedEnded, .channelRetired, .limitReached, .deviceLimitReached:
            status = .conflict
        case .payloadTooLarge: status = .contentTooLarge
        }
        self.init(status, code: error.code.rawValue, error.message, field: error.field)
    }

    /// APNs refused what a workflow asked of it (creating, listing or deleting a channel): `502 apns_refused`.
    init(_ refusal: APNsRefusal) {
        self.init(.badGateway, code: "apns_refused", refusal.message)
    }
}
