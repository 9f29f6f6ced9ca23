import Foundation
import Hummingbird
import LivecastCore
import LivecastStore
import Logging

/// `GET /v1/apps/{bundleId}/activities/{activityId}` and `GET /v1/apps/{bundleId}/deliveries` (backend): what
/// happened to an activity, and the pushes sent, found by `apns-id`, token or update.
struct RecordController: APIController {
    let records: Records
    let deliveries: DeliveryLog

    func addRoutes(to routes: RouteRegistrar) {
        routes.app(.get, "/v1/apps/{bundleId}/activities/{activityId}", role: .backend) { _, context, scope in
            let activityID = try context.parameters.decoded("activityId")
            guard
                let record = try await self.records.logging(to: context.logger).activity(appID: scope.appID, activityID: activityID)
            else {
                throw APIError.notFound("no activity \(activityID)", field: "activityId")
            }
            return record
        }
        routes.app(.get, "/v1/apps/{bundleId}/deliveries", role: .backend) { request, context, scope in
            guard let query = try Self.deliveryQuery(request.uri.queryParameters) else {
                return DeliveryLog.Page(records: [])
            }
            return try await self.deliveries.logging(to: context.logger).find(query, appID: scope.appID)
        }
    }

    /// The delivery log's query from the URL's parameters, each checked.
    /// - Returns: `nil` when nothing can match: an `apnsId` Livecast did not make (APNs' own, say).
    /// - Throws: ``APIError`` `422 invalid` naming the parameter.
    static func deliveryQuery(_ parameters: Parameters) throws -> DeliveryLog.Query? {
        var query = DeliveryLog.Query()
        var isForeignAPNsID = false
        if let apnsID = parameters.get("apnsId") {
            guard apnsID.utf8.count == 36, UUID(uuidString: apnsID) != nil else {
                throw APIError.invalid("apnsId must be a UUID (8-4-4-4-12 hex digits)", field: "apnsId")
            }
            query.apnsID = PushID(apnsID)
            isForeignAPNsID = query.apnsID == nil
        }
        if let token = parameters.get("token") {
            guard !token.isEmpty else { throw APIError.invalid("token must not be empty", field: "token") }
            try InputLimits.checkIdentifier(token, field: "token", maximumBytes: DeviceToken.maximumHexDigits)
            query.token = token
        }
        query.updateID = try parameters.integer("updateId", in: 1...Int64.max)
        query.status = try parameters.integer("status", in: 100...599).map(Int.init)
        if let reason = parameters.get("reason") {
            try InputLimits.checkRequiredIdentifier(reason, field: "reason")
            query.reason = reason
        }
        query.after = try parameters.integer("after", in: 0...Int64.max)
        query.limit = try parameters.pageLimit()
        // Every parameter is checked first: a request with a bad one is refused whatever its apnsId.
        return isForeignAPNsID ? nil : query
    }
}
