import Hummingbird
import LivecastStore

/// Opens the session of a console request from its cookie and acts as the session's key from then on. A page asked
/// for without a live session is sent to sign in (and comes back after); a form posted without one is refused
/// (`403`), as it cannot carry a session's CSRF token. While PostgreSQL does not answer, the page says so (`503`)
/// at once.
struct ConsoleSessionMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    let sessions: ConsoleSessions
    let databaseWatch: DatabaseWatch
    let renderer: ConsoleRenderer

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let sessions = self.sessions
        var session: ConsoleSessions.Session?
        if let token = request.cookies[Console.sessionCookie]?.value {
            do {
                session = try await self.databaseWatch.guarding { try await sessions.session(token: token) }
            } catch {
                let page = ConsolePage.problem(
                    .serviceUnavailable,
                    code: "database_unavailable",
                    message: "PostgreSQL does not answer; try again in a moment",
                    title: "The database does not answer"
                )
                return self.renderer.response(page, session: nil)
            }
        }
        guard let session else {
            guard request.method == .get || request.method == .head else { return self.renderer.response(.signedOut, session: nil) }
            return Console.redirect(to: "/console/login?next=\(InProcessAPI.segment(request.uri.description))")
        }
        var context = context
        context.caller = session.caller
        context.consoleSession = session
        return try await next(request, context)
    }
}
