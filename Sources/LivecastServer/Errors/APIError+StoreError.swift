import Hummingbird
import LivecastStore

extension APIError {
    /// The one place where the store's refusals become HTTP statuses.
    init(_ error: StoreError) {
        let status: HTTPResponse.Status
        switch error.code {
        case .notFound: status = .notFound
        case .invalid: status = .unprocessableContent
        case .conflict, .staleTimestamp, .activityEnded, .limitReached: status = .conflict
        case .payloadTooLarge: status = .contentTooLarge
        case .apnsRefused: status = .badGateway
        default: status = .conflict
        }
        self.init(status, code: error.code.rawValue, error.message, field: error.field.map(Self.requestFieldName))
    }

    /// The store names payload fields as APNs does (`content-state`); requests name them in camelCase.
    private static func requestFieldName(_ name: String) -> String {
        let words = name.split(separator: "-")
        return (words.prefix(1) + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }).joined()
    }
}
