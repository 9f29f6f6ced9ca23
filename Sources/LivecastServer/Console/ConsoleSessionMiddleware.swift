import Hummingbird
import LivecastStore

/// Opens the session of a console request from its cookie and acts as the session's key from then on; a request
/// without a live session is sent to sign in (a `GET` comes back to where it was going). While PostgreSQL does not
/// answer, the page says so (`503`) at once.
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
                var page = ConsolePage(template: "problem", title: "The database does not answer", section: nil)
                page.status = .serviceUnavailable
                page.error = ("database_unavailable", "PostgreSQL does not answer; try again in a moment")
                return self.renderer.response(page, session: nil)
            }
        }
        guard let session else {
            let next = request.method == .get ? "?next=\(InProcessAPI.segment(request.uri.description))" : ""
            return Console.redirect(to: "/console/login\(next)")
        }
        var context = context
        context.caller = session.caller
        context.consoleSession = session
        return try await next(request, context)
    }
}
