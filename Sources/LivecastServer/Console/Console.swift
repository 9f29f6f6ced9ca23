import Foundation
import HTTPTypes
import Hummingbird
import LivecastCore
import LivecastStore
import Logging

/// The operator console at `/console`: server-rendered pages over the API's own routes (``InProcessAPI``), signed in
/// with an API key. Reading pages need a session; every form that changes something also needs the session's CSRF
/// token (`403` without it); what a key may do is what the API lets it do.
struct Console: Sendable {
    /// The session cookie: a random token, its SHA-256 kept in PostgreSQL.
    static let sessionCookie = "livecast_session"
    /// The sign-in form's CSRF token, a cookie the form must repeat (there is no session yet).
    static let signInCookie = "livecast_sign_in"

    typealias Page = @Sendable (Request, APIRequestContext, ConsoleSessions.Session) async throws -> ConsolePage
    typealias Action = @Sendable (ConsoleForm, Request, APIRequestContext, ConsoleSessions.Session) async throws -> Response

    let api: InProcessAPI
    let sessions: ConsoleSessions
    let renderer: ConsoleRenderer
    let trustedProxies: TrustedProxies
    /// Failed authentications per client address, shared with the API: an unknown session cookie counts as one.
    let failedAuthentications: RateLimiter<String>
    let databaseWatch: DatabaseWatch
    let logger: Logger

    /// Adds the console's routes to the router that also serves the API.
    func addRoutes(to router: Router<APIRequestContext>) {
        self.addAssetRoutes(to: router)
        self.addSignInRoutes(to: router)
        let pages = router.group("console")
            .add(
                middleware: ConsoleSessionMiddleware(
                    sessions: self.sessions,
                    databaseWatch: self.databaseWatch,
                    renderer: self.renderer,
                    trustedProxies: self.trustedProxies,
                    failedAuthentications: self.failedAuthentications
                )
            )
            .add(middleware: ConsoleErrorMiddleware(renderer: self.renderer, logger: self.logger))
        self.addOverviewRoutes(to: pages)
        self.addFeedRoutes(to: pages)
        self.addChannelRoutes(to: pages)
        self.addRecordRoutes(to: pages)
        self.addDeadLetterRoutes(to: pages)
        self.addWebhookRoutes(to: pages)
        self.addDeliveryReportRoutes(to: pages)
        self.addKeyRoutes(to: pages)
    }

    /// Adds a page: rendered for the session, or the API's refusal.
    func page(_ group: RouterGroup<APIRequestContext>, _ path: RouterPath, _ page: @escaping Page) {
        group.get(path) { request, context in
            let session = try Self.session(context)
            return self.renderer.response(try await page(request, context, session), session: session)
        }
    }

    /// Adds a form's action: its CSRF token is checked before anything else (`403` without it).
    func action(_ group: RouterGroup<APIRequestContext>, _ path: RouterPath, _ action: @escaping Action) {
        group.post(path) { request, context in
            let session = try Self.session(context)
            let form = try await ConsoleForm(request)
            guard form.carriesToken(of: session) else { throw Self.missingToken }
            return try await action(form, request, context, session)
        }
    }

    /// Renders a page for the session.
    func render(_ page: ConsolePage, _ session: ConsoleSessions.Session) -> Response {
        self.renderer.response(page, session: session)
    }

    /// The API path of the session's app: `/v1/apps/{bundleId}`.
    static func appPath(_ session: ConsoleSessions.Session) -> String {
        "/v1/apps/\(InProcessAPI.segment(session.caller.bundleID))"
    }

    /// A `303` to another console page.
    static func redirect(to location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
    }

    static let missingToken = APIError(
        .forbidden,
        code: "csrf_token_missing",
        "the form did not carry this session's security token; reload the page and try again"
    )

    private static func session(_ context: APIRequestContext) throws -> ConsoleSessions.Session {
        guard let session = context.consoleSession else { throw APIError.unauthenticated }
        return session
    }
}
