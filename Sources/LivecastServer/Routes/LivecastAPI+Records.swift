import Foundation
import Hummingbird
import LivecastCore
import LivecastStore

extension LivecastAPI {
    /// `GET /v1/apps/{bundleId}/activities/{activityId}` and `GET /v1/apps/{bundleId}/deliveries` (backend): what
    /// happened to an activity, and the pushes sent, found by `apns-id`, token or update.
    func addRecordRoutes(to routes: RouteRegistrar) {
        routes.app(.get, "/v1/apps/{bundleId}/activities/{activityId}", role: .backend) { _, context, scope in
            let activityID = try context.parameters.decoded("activityId")
            guard let record = try await ActivityRecord.read(appID: scope.appID, activityID: activityID, client: self.database, logger: self.logger)
            else {
                throw APIError.notFound("no activity \(activityID)", field: "activityId")
            }
            return try .json(record)
        }
        routes.app(.get, "/v1/apps/{bundleId}/deliveries", role: .backend) { request, _, scope in
            guard let query = try Self.deliveryQuery(request.uri.queryParameters) else {
                return try .json(DeliveryLog.Page(records: []))
            }
            return try .json(try await DeliveryLog(client: self.database, logger: self.logger).find(query, appID: scope.appID))
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
        query.updateID = try Self.integer(parameters, "updateId", in: 1...Int64.max)
        query.status = try Self.integer(parameters, "status", in: 100...599).map(Int.init)
        if let reason = parameters.get("reason") {
            try InputLimits.checkRequiredIdentifier(reason, field: "reason")
            query.reason = reason
        }
        query.after = try Self.integer(parameters, "after", in: 0...Int64.max)
        query.limit = try Self.pageLimit(parameters)
        // Every parameter is checked first: a request with a bad one is refused whatever its apnsId.
        return isForeignAPNsID ? nil : query
    }
}
