import Hummingbird
import Metrics
import Synchronization

/// Counts and times the API's requests: `livecast_http_requests_total`, `livecast_http_request_duration_seconds` and
/// `livecast_http_request_errors_total` by route, method and status (`error` for the errors), and
/// `livecast_http_active_requests` by method.
///
/// A request counts once its response is ready rather than once it is written (for a streamed body, the duration is
/// the time to its first byte). Hummingbird's own `MetricsMiddleware` waits for the write by wrapping every body in a
/// closure, and a body that is a closure is written as the head and then the body: two writes to the socket for each
/// response instead of one.
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    private let metrics = Metrics()

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let active = self.metrics.active(request.method)
        active.increment()
        defer { active.decrement() }
        do {
            let response = try await next(request, context)
            let route = self.metrics.route(.init(route: context.endpointPath ?? "Unknown", method: request.method, status: response.status))
            route.requests.increment()
            let (seconds, attoseconds) = start.duration(to: .now).components
            route.duration.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status ?? .internalServerError
            let route = self.metrics.route(.init(route: context.endpointPath ?? "NotFound", method: request.method, status: status))
            route.requests.increment()
            route.errors.increment()
            throw error
        }
    }

    /// Each metric made once, for each method or each route, method and status met so far.
    private final class Metrics: Sendable {
        struct RouteKey: Hashable {
            let route: String
            let method: HTTPRequest.Method
            let status: HTTPResponse.Status
        }

        struct RouteMetrics: Sendable {
            let requests: Counter
            let duration: Timer
            let errors: Counter

            init(_ key: RouteKey) {
                let dimensions = [("route", key.route), ("method", key.method.rawValue), ("status", String(key.status.code))]
                self.requests = Counter(label: "livecast_http_requests_total", dimensions: dimensions)
                self.duration = Timer(label: "livecast_http_request_duration_seconds", dimensions: dimensions, preferredDisplayUnit: .seconds)
                self.errors = Counter(
                    label: "livecast_http_request_errors_total",
                    dimensions: [("route", key.route), ("method", key.method.rawValue), ("error", String(key.status.code))]
                )
            }
        }

        private let actives = Mutex<[HTTPRequest.Method: Meter]>([:])
        private let routes = Mutex<[RouteKey: RouteMetrics]>([:])

        func active(_ method: HTTPRequest.Method) -> Meter {
            self.actives.withLock { actives in
                if let meter = actives[method] { return meter }
                let meter = Meter(label: "livecast_http_active_requests", dimensions: [("method", method.rawValue)])
                actives[method] = meter
                return meter
            }
        }

        func route(_ key: RouteKey) -> RouteMetrics {
            self.routes.withLock { routes in
                if let metrics = routes[key] { return metrics }
                let metrics = RouteMetrics(key)
                routes[key] = metrics
                return metrics
            }
        }
    }
}
