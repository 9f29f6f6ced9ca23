import Foundation
import Hummingbird
import LivecastService
import LivecastStore

extension LivecastAPI {
    /// `GET /v1/key` (any key): the calling key, its app and role; and `GET /v1/apps/{bundleId}/overview`
    /// (backend): the app at a glance, as the console's overview shows it.
    func addOverviewRoutes(to routes: RouteRegistrar) {
        routes.keyed(.get, "/v1/key") { _, context in
            guard let caller = context.caller else { throw APIError.unauthenticated }
            return try .json(caller)
        }
        routes.app(.get, "/v1/apps/{bundleId}/overview", role: .backend) { _, context, scope in
            guard let overview = try await AppOverview.read(appID: scope.appID, client: self.database, logger: self.logger) else {
                throw APIError.notFound("no app \(scope.bundleID)")
            }
            let checks = await self.readinessChecks(logger: context.logger)
            var problems = checks.filter { $0.value != "ok" && $0.value != "not run here" }.map { "\($0.key): \($0.value)" }.sorted()
            if let held = overview.sendingHeldReason {
                problems.append("sending held by the invalidation guard: \(held); resume with POST /v1/apps/{bundleId}/sending:resume")
            }
            if await self.appClients.isUnusable(appID: scope.appID) {
                problems.append("the app's signing key cannot be opened; its pushes are held back (see the log)")
            }
            return try .json(OverviewBody(overview: overview, channelLimit: self.configuration.channelLimit, problems: problems))
        }
    }
}
