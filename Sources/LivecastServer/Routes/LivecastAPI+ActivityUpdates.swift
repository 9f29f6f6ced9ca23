import Foundation
import HTTPTypes
import Hummingbird
import LivecastCore
import LivecastStore

extension LivecastAPI {
    /// The longest accepted `Idempotency-Key`.
    static let maximumIdempotencyKeyLength = 200
    /// How far ahead of the server's clock a timestamp may be: a later one would hold back every update after it.
    static let maximumClockSkew = 3600

    /// `POST /v1/apps/{bundleId}/activities/{activityId}/updates` and `/end` (backend): `202` once the update is
    /// stored in the outbox. With an `Idempotency-Key` header, a retried request gets the first answer again.
    func addActivityUpdateRoutes(to routes: RouteRegistrar) {
        routes.app(.post, "/v1/apps/{bundleId}/activities/{activityId}/updates", role: .backend) { request, context, scope in
            try await self.acceptOnce(request, context, scope) {
                let body = try await request.decodeJSON(as: ActivityUpdateBody.self, context: context)
                var update = ActivityUpdates.Request(
                    appID: scope.appID,
                    activityKey: try context.parameters.decoded("activityId"),
                    event: .update,
                    contentState: body.contentState,
                    timestamp: body.timestamp
                )
                update.staleDate = body.staleDate
                update.alert = body.alert?.alert
                update.priority = body.priority
                update.relevanceScore = body.relevanceScore
                return update
            }
        }
        routes.app(.post, "/v1/apps/{bundleId}/activities/{activityId}/end", role: .backend) { request, context, scope in
            try await self.acceptOnce(request, context, scope) {
                let body = try await request.decodeJSON(as: ActivityEndBody.self, context: context)
                var end = ActivityUpdates.Request(
                    appID: scope.appID,
                    activityKey: try context.parameters.decoded("activityId"),
                    event: .end,
                    contentState: body.contentState,
                    timestamp: body.timestamp
                )
                end.dismissalDate = body.dismissalDate
                return end
            }
        }
    }

    /// Replays the answer kept for the idempotency key, or reads, checks and stores the request and keeps its answer.
    private func acceptOnce(
        _ request: Request,
        _ context: APIRequestContext,
        _ scope: AppScope,
        read: () async throws -> ActivityUpdates.Request
    ) async throws -> Response {
        let responses = UpdateResponses(client: self.database, logger: self.logger)
        let idempotencyKey = request.headers[.idempotencyKey]
        if let idempotencyKey {
            guard !idempotencyKey.isEmpty, idempotencyKey.count <= Self.maximumIdempotencyKeyLength else {
                throw APIError.invalid("Idempotency-Key must be 1 to \(Self.maximumIdempotencyKeyLength) characters", field: "Idempotency-Key")
            }
            if let kept = try await responses.response(appID: scope.appID, idempotencyKey: idempotencyKey) {
                return Self.accepted(kept, replayed: true)
            }
        }
        var update = try await read()
        update.idempotencyKey = idempotencyKey
        let now = Int(Date().timeIntervalSince1970)
        try Self.checkDates(update, now: now)
        let accepted = try await ActivityUpdates(client: self.database, logger: self.logger).accept(update, now: now)
        let answer = String(decoding: try JSONEncoder.sorted.encode(AcceptedBody(accepted)), as: UTF8.self)
        if !accepted.isReplay {
            try await responses.record(answer, updateID: accepted.updateID)
        }
        return Self.accepted(answer, replayed: accepted.isReplay)
    }

    /// Dates the store cannot judge without the clock: a timestamp far ahead, a stale date already past.
    private static func checkDates(_ update: ActivityUpdates.Request, now: Int) throws {
        if let timestamp = update.timestamp {
            guard timestamp > 0 else { throw APIError.invalid("timestamp must be positive UNIX seconds", field: "timestamp") }
            guard timestamp <= now + Self.maximumClockSkew else {
                throw APIError.invalid("timestamp is more than an hour ahead of the server's clock", field: "timestamp")
            }
        }
        if let staleDate = update.staleDate, staleDate <= now {
            throw APIError.invalid("staleDate is in the past", field: "staleDate")
        }
    }

    private static func accepted(_ body: String, replayed: Bool) -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if replayed { headers[.idempotentReplayed] = "true" }
        return Response(status: .accepted, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}
