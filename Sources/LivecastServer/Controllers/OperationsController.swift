import Foundation
import Hummingbird

/// `GET /health`, `/ready` and `/openapi.yaml`: no key needed. `/ready` tells each check's verdict, not which apps
/// have trouble: that detail is on the metrics listener's `/ready` (``LivecastAPI/buildMetricsRouter()``), which is
/// not for the public.
struct OperationsController: APIController {
    let readiness: ReadinessReport

    /// `GET /health`'s answer, written once: load balancers ask often, and encoding it anew showed in the request's
    /// profile (docs/PERFORMANCE.md).
    private static let healthy = ByteBuffer(string: #"{"status":"ok"}"#)

    func addRoutes(to routes: RouteRegistrar) {
        routes.open(.get, "/health") { _, _ in
            Response.json(text: Self.healthy.readableBytesView)
        }
        routes.open(.get, "/ready") { _, context in
            try await self.readiness.response(withDetail: false, logger: context.logger)
        }
        routes.open(.get, "/openapi.yaml") { _, _ in
            guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml"), let document = try? Data(contentsOf: url) else {
                throw APIError.internalError
            }
            return Response(status: .ok, headers: [.contentType: "application/yaml"], body: .init(byteBuffer: ByteBuffer(bytes: document)))
        }
    }
}
