import Foundation
import HTTPTypes
import Hummingbird
import LivecastCore
import LivecastStore
import Logging
import Metrics

extension UpdateController {
    /// Answers a start, update or end posted to `route`: replays the answer kept for its `Idempotency-Key` on the
    /// same route and target (`422 idempotency_key_reused` when the body differs); or, when its `sendAt` is ahead,
    /// checks it as of then and keeps it until then (`"status": "scheduled"`); or checks and stores it in the outbox.
    /// The answer is kept when the request has an idempotency key (by the store, with the update), and is `202`.
    ///
    /// A request for the outbox is replayed by the transaction that would store it (``AcceptedUpdate/keptAnswer``),
    /// with no look-up of its own before. Only a request to be scheduled, or one refused before the outbox, asks for
    /// a kept answer first: a retry can be refused by checks of the clock (a stale date now past) that its first
    /// request passed.
    func acceptOnce(_ request: Request, _ context: APIRequestContext, _ scope: AppScope, route: UpdateRoute) async throws -> Response {
        let target = try context.parameters.decoded(route.targetParameter)
        let body = try await request.bodyBytes(upTo: context.maxUploadSize)
        var idempotencyKey: IdempotencyKey?
        if let key = request.headers[.idempotencyKey] {
            guard !key.isEmpty else { throw APIError.invalid("Idempotency-Key must not be empty", field: "Idempotency-Key") }
            try InputLimits.checkIdentifier(key, field: "Idempotency-Key", maximumBytes: InputLimits.idempotencyKeyBytes)
            idempotencyKey = IdempotencyKey(key: key, scope: "\(request.method) \(request.uri.path)", body: body)
        }
        let now = Int(Date().timeIntervalSince1970)
        let decoded: UpdateRequestBody
        do {
            decoded = try UpdateRequestBody(route, body: body)
        } catch {
            return try await self.replay(refusedWith: error, scope, idempotencyKey, logger: context.logger)
        }
        if let sendAt = decoded.sendAt, sendAt > now {
            if let kept = try await self.keptAnswer(scope, idempotencyKey, logger: context.logger) { return Self.accepted(kept, replayed: true) }
            return try await self.replayingRace(scope, idempotencyKey, logger: context.logger) {
                try await self.schedule(
                    route,
                    target: target,
                    body: (body, decoded),
                    sendAt: sendAt,
                    now: now,
                    scope: scope,
                    idempotencyKey: idempotencyKey,
                    logger: context.logger
                )
            }
        }
        let prepared: PreparedUpdate
        do {
            prepared = try self.intake.prepare(route, target: target, body: decoded, appID: scope.appID, idempotencyKey: idempotencyKey, now: now)
        } catch {
            return try await self.replay(refusedWith: error, scope, idempotencyKey, logger: context.logger)
        }
        return try await self.replayingRace(scope, idempotencyKey, logger: context.logger) {
            let accepted = try await self.intake.store(prepared, logger: context.logger)
            if accepted.priorityDowngraded, !accepted.isReplay {
                Counter(label: "livecast_priority_downgrades_total").increment()
            }
            // A request with an idempotency key had its answer kept with the update, in the same transaction.
            return Self.accepted(accepted.answer, replayed: accepted.isReplay)
        }
    }

    /// The answer kept for a retried request that was refused before the outbox, by a check its first request passed
    /// (the first was answered `202`); otherwise `refusal` is thrown.
    /// - Throws: `refusal`; ``StoreError`` `idempotencyKeyReused` when the first request had another body.
    private func replay(
        refusedWith refusal: any Error,
        _ scope: AppScope,
        _ idempotencyKey: IdempotencyKey?,
        logger: Logger
    ) async throws -> Response {
        guard let kept = try await self.keptAnswer(scope, idempotencyKey, logger: logger) else { throw refusal }
        return Self.accepted(kept, replayed: true)
    }

    /// Runs `store`; should it lose a race to a request with the same idempotency key (a client's retry sent while
    /// its first try was still being stored, `409 conflict`), answers what that request kept instead.
    private func replayingRace(
        _ scope: AppScope,
        _ idempotencyKey: IdempotencyKey?,
        logger: Logger,
        _ store: () async throws -> Response
    ) async throws -> Response {
        do {
            return try await store()
        } catch let error as StoreError where error.code == .conflict && idempotencyKey != nil {
            return try await self.replay(refusedWith: error, scope, idempotencyKey, logger: logger)
        }
    }

    /// The answer kept for the app's request with this idempotency key on the same route and target, if any.
    /// - Throws: ``StoreError`` `idempotencyKeyReused` when that request had another body.
    private func keptAnswer(_ scope: AppScope, _ idempotencyKey: IdempotencyKey?, logger: Logger) async throws -> String? {
        guard let idempotencyKey else { return nil }
        return try await self.responses.logging(to: logger).response(appID: scope.appID, idempotencyKey: idempotencyKey)
    }

    /// Keeps a request until its `sendAt`, checked as it will be then, for a target the app has.
    /// - Parameter body: The body as posted, which is kept, and decoded.
    private func schedule(
        _ route: UpdateRoute,
        target: String,
        body: (bytes: [UInt8], decoded: UpdateRequestBody),
        sendAt: Int,
        now: Int,
        scope: AppScope,
        idempotencyKey: IdempotencyKey?,
        logger: Logger
    ) async throws -> Response {
        guard sendAt <= now + Self.maximumScheduleAhead else {
            throw APIError.invalid("sendAt is more than \(Self.maximumScheduleAhead / 86400) days ahead", field: "sendAt")
        }
        _ = try self.intake.prepare(route, target: target, body: body.decoded, appID: scope.appID, idempotencyKey: nil, now: sendAt)
        let scheduled = self.intake.scheduled.logging(to: logger)
        guard try await scheduled.targetExists(appID: scope.appID, route: route.rawValue, target: target) else {
            throw APIError.notFound("no \(route.targetParameter == "feedKey" ? "feed" : "activity") \(target)", field: route.targetParameter)
        }
        func answer(_ id: Int64) throws -> String {
            String(decoding: try JSONEncoder.sorted.encode(ScheduledBody(updateId: id, sendAt: sendAt)), as: UTF8.self)
        }
        // With a key, the answer is kept by the insert, which numbers it with the id it draws.
        let (id, kept) = try await scheduled.schedule(
            appID: scope.appID,
            route: route.rawValue,
            target: target,
            body: body.bytes,
            sendAt: sendAt,
            keyID: scope.caller.keyID,
            idempotencyKey: idempotencyKey,
            unnumberedAnswer: idempotencyKey == nil ? nil : try answer(0)
        )
        return Self.accepted(try kept ?? answer(id), replayed: false)
    }

    private static func accepted(_ body: String, replayed: Bool) -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if replayed { headers[.idempotentReplayed] = "true" }
        return Response(status: .accepted, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}
