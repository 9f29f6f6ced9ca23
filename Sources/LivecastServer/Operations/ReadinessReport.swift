import Hummingbird
import LivecastService
import LivecastStore
import Logging
import PostgresNIO

/// What `/ready` answers, on the API's listener and, with the detail of the apps in trouble, on the metrics
/// listener's; and the checks the overview reports.
struct ReadinessReport: Sendable {
    let database: PostgresClient
    let apps: Apps
    let appClients: AppClients
    let readiness: Readiness
    let databaseWatch: DatabaseWatch
    /// The answer, kept for ``LivecastAPI/Configuration/readinessLifetime``.
    let cache: ReadinessCache

    private struct ReadyBody: Encodable {
        let status: String
        let checks: [String: String]
        /// What is wrong for some apps only: reported, without taking this instance out of service for the others;
        /// on the metrics listener only.
        let detail: [String: String]?
    }

    /// `/ready`'s answer (``ReadinessCache``): `200` when ready, else `503`, with the detail or without.
    func response(withDetail: Bool, logger: Logger) async throws -> Response {
        let answer = await self.cache.answer {
            let checks = await self.checks(logger: logger)
            return ReadinessCache.Answer(checks: checks, detail: await self.detail(checks, logger: logger))
        }
        let body = ReadyBody(status: answer.isReady ? "ready" : "not ready", checks: answer.checks, detail: withDetail ? answer.detail : nil)
        return try .json(body, status: answer.isReady ? .ok : .serviceUnavailable)
    }

    /// Problems of some apps: signing keys that cannot be opened, sending held by the invalidation guard (their
    /// bundle ids are in the log and on `GET /v1/apps/{bundleId}`, not here).
    private func detail(_ checks: [String: String], logger: Logger) async -> [String: String] {
        var detail: [String: String] = [:]
        let unusable = await self.appClients.unusableKeyCount
        if unusable > 0 {
            detail["signingKeys"] = "\(unusable) app(s) have a signing key that cannot be opened; their pushes are held back (see the log)"
        }
        let apps = self.apps.logging(to: logger)
        if checks["database"] == "ok", let held = try? await self.databaseWatch.guarding({ try await apps.heldCount() }), held > 0 {
            detail["sendingHeld"] =
                "\(held) app(s) held by the invalidation guard: one batch of pushes came back mostly Unregistered or BadDeviceToken "
                + "(a wrong environment or key?); no token was invalidated; resume with POST /v1/apps/{bundleId}/sending:resume"
        }
        return detail
    }

    /// Each check's verdict: `ok`, `not run here`, or what is wrong. The database check is answered at once when
    /// ``DatabaseWatch`` finds PostgreSQL unreachable, including while it waits.
    func checks(logger: Logger) async -> [String: String] {
        var checks: [String: String] = [:]
        do {
            let database = self.database
            let applied = try await self.databaseWatch.guarding {
                Set(try await MigrationRunner.applied(on: database, logger: logger).map(\.name))
            }
            checks["database"] = "ok"
            let missing = self.readiness.migrations.map(\.name).filter { !applied.contains($0) }
            checks["migrations"] = missing.isEmpty ? "ok" : "not applied: \(missing.joined(separator: ", "))"
        } catch {
            logger.warning("Readiness: the database does not answer", metadata: APIErrorMiddleware.metadata(error))
            checks["database"] = "unreachable"
            checks["migrations"] = "unknown"
        }
        if let isDispatcherRunning = self.readiness.isDispatcherRunning {
            checks["dispatcher"] = isDispatcherRunning() ? "ok" : "not running"
        } else {
            checks["dispatcher"] = "not run here"
        }
        return checks
    }
}
