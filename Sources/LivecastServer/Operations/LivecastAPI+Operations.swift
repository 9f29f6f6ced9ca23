import Foundation
import Hummingbird
import LivecastService
import LivecastStore
import Logging

extension LivecastAPI {
    /// `GET /health`, `/ready` and `/openapi.yaml`: no key needed. `/ready` tells each check's verdict, not which
    /// apps have trouble: that detail is on the metrics listener's `/ready` (``LivecastAPI/buildMetricsRouter()``),
    /// which is not for the public.
    func addOperationsRoutes(to routes: RouteRegistrar) {
        routes.open(.get, "/health") { _, _ in
            .json(text: Self.healthy.readableBytesView)
        }
        routes.open(.get, "/ready") { _, context in
            try await self.readyResponse(withDetail: false, logger: context.logger)
        }
        routes.open(.get, "/openapi.yaml") { _, _ in
            guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml"), let document = try? Data(contentsOf: url) else {
                throw APIError.internalError
            }
            return Response(status: .ok, headers: [.contentType: "application/yaml"], body: .init(byteBuffer: ByteBuffer(bytes: document)))
        }
    }

    /// `GET /health`'s answer, written once: load balancers ask often, and encoding it anew showed in the request's
    /// profile (docs/PERFORMANCE.md).
    private static let healthy = ByteBuffer(string: #"{"status":"ok"}"#)

    private struct ReadyBody: Encodable {
        let status: String
        let checks: [String: String]
        /// What is wrong for some apps only: reported, without taking this instance out of service for the others;
        /// on the metrics listener only.
        let detail: [String: String]?
    }

    /// `/ready`'s answer (``ReadinessCache``): `200` when ready, else `503`, with the detail or without.
    func readyResponse(withDetail: Bool, logger: Logger) async throws -> Response {
        let answer = await self.readinessCache.answer {
            let checks = await self.readinessChecks(logger: logger)
            return ReadinessCache.Answer(checks: checks, detail: await self.readinessDetail(checks))
        }
        let body = ReadyBody(status: answer.isReady ? "ready" : "not ready", checks: answer.checks, detail: withDetail ? answer.detail : nil)
        return try .json(body, status: answer.isReady ? .ok : .serviceUnavailable)
    }

    /// Problems of some apps: signing keys that cannot be opened, sending held by the invalidation guard (their
    /// bundle ids are in the log and on `GET /v1/apps/{bundleId}`, not here).
    func readinessDetail(_ checks: [String: String]) async -> [String: String] {
        var detail: [String: String] = [:]
        let unusable = await self.appClients.unusableKeyCount
        if unusable > 0 {
            detail["signingKeys"] = "\(unusable) app(s) have a signing key that cannot be opened; their pushes are held back (see the log)"
        }
        if checks["database"] == "ok", let held = try? await self.databaseWatch.guarding({ try await self.apps.heldCount() }), held > 0 {
            detail["sendingHeld"] =
                "\(held) app(s) held by the invalidation guard: one batch of pushes came back mostly Unregistered or BadDeviceToken "
                + "(a wrong environment or key?); no token was invalidated; resume with POST /v1/apps/{bundleId}/sending:resume"
        }
        return detail
    }

    /// Each check's verdict: `ok`, `not run here`, or what is wrong. The database check is answered at once when
    /// ``DatabaseWatch`` finds PostgreSQL unreachable, including while it waits.
    func readinessChecks(logger: Logger) async -> [String: String] {
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
