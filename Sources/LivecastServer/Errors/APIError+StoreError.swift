import Hummingbird
import LivecastStore

extension APIError {
    /// The one place where the store's refusals become HTTP statuses.
    init(_ error: StoreError) {
        let status: HTTPResponse.Status
        switch error.code {
        case .notFound: status = .notFound
        case .invalid: status = .unprocessableContent
        case .conflict, .staleTimestamp, .activityEnded, .feedEnded, .channelRetired, .limitReached: status = .conflict
        case .payloadTooLarge: status = .contentTooLarge
        case .apnsRefused: status = .badGateway
        default: status = .conflict
        }
        self.init(status, code: error.code.rawValue, error.message, field: error.field)
    }
}
