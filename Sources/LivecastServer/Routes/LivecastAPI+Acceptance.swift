import Foundation
import HTTPTypes
import Hummingbird
import LivecastStore
import Metrics

extension LivecastAPI {
    /// Answers a start, update or end: replays the answer kept for its `Idempotency-Key` on the same route and
    /// target (`422 idempotency_key_reused` when the body differs), or has `accept` read, check and store it, keeps
    /// the answer when the request has an idempotency key, and returns `202`.
    /// - Parameter accept: Stores the request (its body readable again), given its idempotency key and the server's
    ///   time (UNIX seconds).
    func acceptOnce(
        _ request: Request,
        _ context: APIRequestContext,
        _ scope: AppScope,
        accept: (_ request: Request, _ idempotencyKey: IdempotencyKey?, _ now: Int) async throws -> AcceptedUpdate
    ) async throws -> Response {
        let responses = UpdateResponses(client: self.database, logger: self.logger)
        var request = request
        var idempotencyKey: IdempotencyKey?
        if let key = request.headers[.idempotencyKey] {
            guard !key.isEmpty else { throw APIError.invalid("Idempotency-Key must not be empty", field: "Idempotency-Key") }
            try InputLimits.checkIdentifier(key, field: "Idempotency-Key", maximumBytes: InputLimits.idempotencyKeyBytes)
            let body = try await request.collectBody(upTo: context.maxUploadSize)
            idempotencyKey = IdempotencyKey(key: key, scope: "\(request.method) \(request.uri.path)", body: body.readableBytesView)
        }
        if let idempotencyKey, let kept = try await responses.response(appID: scope.appID, idempotencyKey: idempotencyKey) {
            return Self.accepted(kept, replayed: true)
        }
        let accepted = try await accept(request, idempotencyKey, Int(Date().timeIntervalSince1970))
        if accepted.priorityDowngraded, !accepted.isReplay {
            Counter(label: "livecast_priority_downgrades_total").increment()
        }
        let answer = String(decoding: try JSONEncoder.sorted.encode(AcceptedBody(accepted)), as: UTF8.self)
        // Only a request with an idempotency key can be replayed: only its answer is kept.
        if idempotencyKey != nil, !accepted.isReplay {
            try await responses.record(answer, updateID: accepted.updateID)
        }
        return Self.accepted(answer, replayed: accepted.isReplay)
    }

    /// Adds `POST {target}/updates` and `POST {target}/end` (backend): each body becomes ``UpdateContent``, with the
    /// request's idempotency key, and `store` stores it for the target the path names.
    /// - Parameter store: Stores the content, given the request's path parameters and the server's time.
    func addUpdateAndEndRoutes(
        to routes: RouteRegistrar,
        target: String,
        store: @escaping @Sendable (_ content: UpdateContent, _ scope: AppScope, _ parameters: Parameters, _ now: Int) async throws -> AcceptedUpdate
    ) {
        routes.app(.post, "\(target)/updates", role: .backend) { request, context, scope in
            try await self.acceptContent(request, context, scope, as: UpdateBody.self, store: store)
        }
        routes.app(.post, "\(target)/end", role: .backend) { request, context, scope in
            try await self.acceptContent(request, context, scope, as: EndBody.self, store: store)
        }
    }

    private func acceptContent<Body: UpdateContentBody>(
        _ request: Request,
        _ context: APIRequestContext,
        _ scope: AppScope,
        as _: Body.Type,
        store: (UpdateContent, AppScope, Parameters, Int) async throws -> AcceptedUpdate
    ) async throws -> Response {
        try await self.acceptOnce(request, context, scope) { request, idempotencyKey, now in
            var content = try await request.decodeJSON(as: Body.self, context: context).content(now: now)
            try self.checkClockSkew(content.timestamp, now: now)
            content.idempotencyKey = idempotencyKey
            return try await store(content, scope, context.parameters, now)
        }
    }

    /// Refuses a timestamp further ahead of `now` than the configured ``Configuration/maximumClockSkew``.
    func checkClockSkew(_ timestamp: Int?, now: Int) throws {
        guard let timestamp, timestamp > now + self.configuration.maximumClockSkew else { return }
        throw APIError.timestampTooFarAhead(maximumSkew: self.configuration.maximumClockSkew)
    }

    /// Dates the store cannot judge without the clock: a timestamp not positive, a stale date already past. (How far
    /// ahead a timestamp may be is ``checkClockSkew(_:now:)``.)
    static func checkDates(timestamp: Int?, staleDate: Int?, now: Int) throws {
        if let timestamp, timestamp <= 0 {
            throw APIError.invalid("timestamp must be positive UNIX seconds", field: "timestamp")
        }
        if let staleDate, staleDate <= now {
            throw APIError.invalid("staleDate is in the past", field: "staleDate")
        }
    }

    private static func accepted(_ body: String, replayed: Bool) -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if replayed { headers[.idempotentReplayed] = "true" }
        return Response(status: .accepted, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}
