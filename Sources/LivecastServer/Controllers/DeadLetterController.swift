import Hummingbird
import LivecastService
import LivecastStore
import Logging

/// `GET /v1/apps/{bundleId}/dead-letters` (backend) and `POST …/dead-letters/{deadLetterId}/replay` (operator).
struct DeadLetterController: APIController {
    let records: Records
    /// Replays with the retry deadline the server was given.
    let replay: DeadLetterReplay

    func addRoutes(to routes: RouteRegistrar) {
        routes.app(.get, "/v1/apps/{bundleId}/dead-letters", role: .backend) { request, context, scope in
            let parameters = request.uri.queryParameters
            let limit = try parameters.pageLimit()
            let after = try parameters.integer("after", in: 0...Int64.max)
            let entries = try await self.records.logging(to: context.logger).deadLetters(appID: scope.appID, after: after, limit: limit + 1)
            return PageBody("deadLetters", entries, limit: limit) { $0.id }
        }
        routes.app(.post, "/v1/apps/{bundleId}/dead-letters/{deadLetterId}/replay", role: .operator) { _, context, scope in
            let id = try context.parameters.id("deadLetterId")
            let replay = self.replay.logging(to: context.logger)
            let outcome: DeadLetterReplay.Outcome
            do {
                guard let replayed = try await replay.replay(id: id, appID: scope.appID) else {
                    throw APIError.notFound("no dead letter \(id)", field: "deadLetterId")
                }
                outcome = replayed
            } catch DeadLetterReplay.Refusal.alreadyReplayed(let earlier) {
                throw APIError(.conflict, code: "conflict", "dead letter \(id) was replayed already (\(earlier.rawValue))", field: "deadLetterId")
            }
            return EditedResponse(status: .accepted, response: ReplayBody(deadLetterId: id, outcome: outcome.rawValue))
        }
    }
}
