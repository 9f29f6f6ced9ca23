import Hummingbird
import LivecastStore

/// One route: its method and path template as the OpenAPI document writes them (`/v1/apps/{bundleId}`).
struct APIRoute: Hashable, Sendable, CustomStringConvertible {
    let method: HTTPRequest.Method
    let path: String

    var description: String { "\(self.method) \(self.path)" }
}

/// Adds the API's routes to the router and remembers each one, so a test can hold them against the OpenAPI
/// document. `/v1/apps/{bundleId}/…` routes go through API-key authentication and name the role they need.
///
/// A handler returns what it answers: a value (``ResponseEncodable``, encoded by the request context's
/// ``APIRequestContext/responseEncoder``), one wrapped in `EditedResponse` for another status, a status alone, or a
/// `Response` written ahead (the answers on the hot paths).
final class RouteRegistrar {
    typealias Handler = @Sendable (Request, APIRequestContext) async throws -> any ResponseGenerator
    typealias AppHandler = @Sendable (Request, APIRequestContext, AppScope) async throws -> any ResponseGenerator

    private let router: Router<APIRequestContext>
    private let authenticated: RouterGroup<APIRequestContext>
    private let databaseWatch: DatabaseWatch
    /// The device header and rate limits of client keys.
    private let clients: ClientKeys
    /// Every route added so far, in order.
    private(set) var routes: [APIRoute] = []

    init(router: Router<APIRequestContext>, authentication: APIKeyMiddleware, databaseWatch: DatabaseWatch, clients: ClientKeys) {
        self.router = router
        self.authenticated = router.group().add(middleware: authentication)
        self.databaseWatch = databaseWatch
        self.clients = clients
    }

    /// Adds an open route (health, readiness, the document).
    func open(_ method: HTTPRequest.Method, _ path: String, _ handler: @escaping Handler) {
        self.record(method, path)
        self.router.on(RouterPath(path), method: method) { request, context in
            try await handler(request, context).response(from: request, context: context)
        }
    }

    /// Adds a route of one app, for keys of that app with at least `role`. It is answered `503 database_unavailable`
    /// rather than left waiting while PostgreSQL does not answer, or when it waits on PostgreSQL longer than
    /// ``DatabaseWatch/waitTimeout`` (``DatabaseWatch``).
    /// - Parameter callsAPNs: The route also waits on APNs (channels): APNs' timeouts bound it, not the wait timeout.
    func app(_ method: HTTPRequest.Method, _ path: String, role: APIKeys.Role, callsAPNs: Bool = false, _ handler: @escaping AppHandler) {
        self.record(method, path)
        let databaseWatch = self.databaseWatch
        self.authenticated.on(RouterPath(path), method: method) { request, context in
            let scope = try AppScope(context: context, role: role)
            return try await databaseWatch.guarding(isBounded: !callsAPNs) {
                try await handler(request, context, scope).response(from: request, context: context)
            }
        }
    }

    /// Adds a route of one app that client keys may call too, for their own device only: the request names it in
    /// `Livecast-Device-ID` (``AppScope/clientDeviceID``), and the handler holds the device's resources to it. A
    /// client key's request passes the gate every instance shares first (``ClientKeys/pass(_:address:admission:logger:)``).
    /// Other keys need at least `role`. Answered `503` as ``app(_:_:role:callsAPNs:_:)``'s routes are.
    /// - Parameter admitsDevice: The handler passes the gate itself, with its device's admission (a registration).
    func device(
        _ method: HTTPRequest.Method,
        _ path: String,
        role: APIKeys.Role = .backend,
        admitsDevice: Bool = false,
        _ handler: @escaping AppHandler
    ) {
        self.record(method, path)
        let databaseWatch = self.databaseWatch
        let clients = self.clients
        self.authenticated.on(RouterPath(path), method: method) { request, context in
            let scope = try AppScope(context: context, role: role, request: request, clients: clients)
            return try await databaseWatch.guarding {
                if !admitsDevice { try await clients.pass(scope, address: context.clientAddress, logger: context.logger) }
                return try await handler(request, context, scope).response(from: request, context: context)
            }
        }
    }

    /// Adds a route for any valid key but a client key, about the key itself rather than one app's resources.
    func keyed(_ method: HTTPRequest.Method, _ path: String, _ handler: @escaping Handler) {
        self.record(method, path)
        self.authenticated.on(RouterPath(path), method: method) { request, context in
            guard context.caller?.role != .client else { throw APIError.forbidden(needs: APIKeys.Role.backend.rawValue) }
            return try await handler(request, context).response(from: request, context: context)
        }
    }

    private func record(_ method: HTTPRequest.Method, _ path: String) {
        self.routes.append(APIRoute(method: method, path: path))
    }
}
