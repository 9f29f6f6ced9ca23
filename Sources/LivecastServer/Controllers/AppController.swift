import Hummingbird
import LivecastService
import LivecastStore
import Logging

/// `GET /v1/apps/{bundleId}` (admin): the caller's app; `POST …/sending:resume` (admin): lets it send again after
/// the invalidation guard held it, or sends again what awaited its credentials' proof; `GET …/overview` (backend): the app at a glance, as the console's overview shows
/// it; and `GET /v1/key` (any key but a client key): the calling key, its app and role.
struct AppController: APIController {
    let apps: Apps
    let records: Records
    let appleMetricsCredentials: AppleMetricsCredentials
    let appleMetricsExports: AppleMetricsExports
    let appClients: AppClients
    let readiness: ReadinessReport
    /// The channels an app may have, which the overview shows beside its count.
    let channelLimit: Int
    /// How long after a start its app has to register the activity, for the overview's confirmed starts.
    let startRegistrationTimeout: Duration

    func addRoutes(to routes: RouteRegistrar) {
        routes.app(.get, "/v1/apps/{bundleId}", role: .admin) { _, context, scope in
            guard let app = try await self.apps.logging(to: context.logger).app(id: scope.appID) else {
                throw APIError.notFound("no app \(scope.bundleID)")
            }
            let appleMetrics = try await AppleMetricsStatus.read(
                appID: scope.appID,
                credentials: self.appleMetricsCredentials.logging(to: context.logger),
                exports: self.appleMetricsExports.logging(to: context.logger),
                logger: context.logger
            )
            return AppRecordBody(app: app, appleMetrics: appleMetrics)
        }
        routes.app(.post, "/v1/apps/{bundleId}/sending:resume", role: .admin) { _, context, scope in
            let apps = self.apps.logging(to: context.logger)
            guard try await apps.resumeSending(id: scope.appID) else {
                throw APIError(.conflict, code: "conflict", "the app's sending is not held, nor are its credentials in doubt")
            }
            context.logger.notice("resumed an app's sending", metadata: ["app": "\(scope.bundleID)"])
            guard let app = try await apps.app(id: scope.appID) else { throw APIError.notFound("no app \(scope.bundleID)") }
            return app
        }
        routes.app(.get, "/v1/apps/{bundleId}/overview", role: .backend) { _, context, scope in
            try await self.overview(scope, context: context)
        }
        routes.keyed(.get, "/v1/key") { _, context in
            guard let caller = context.caller else { throw APIError.unauthenticated }
            return caller
        }
    }

    private func overview(_ scope: AppScope, context: APIRequestContext) async throws -> OverviewBody {
        guard
            let overview = try await self.records.logging(to: context.logger).overview(
                appID: scope.appID,
                registrationTimeout: self.startRegistrationTimeout
            )
        else {
            throw APIError.notFound("no app \(scope.bundleID)")
        }
        let checks = await self.readiness.checks(logger: context.logger)
        var problems = checks.filter { $0.value != "ok" && $0.value != "not run here" }.map { "\($0.key): \($0.value)" }.sorted()
        if let held = overview.sendingHeldReason {
            problems.append("sending held by the invalidation guard: \(held); resume with POST /v1/apps/{bundleId}/sending:resume")
        }
        if let doubt = overview.credentialsDoubt {
            problems.append("\(doubt); once the environment or key is put right, send again with POST /v1/apps/{bundleId}/sending:resume")
        }
        if await self.appClients.isUnusable(appID: scope.appID) {
            problems.append("the app's signing key cannot be opened; its pushes are held back (see the log)")
        }
        return OverviewBody(overview: overview, channelLimit: self.channelLimit, problems: problems)
    }
}
