import HTTPTypes
import Hummingbird
import LivecastStore

/// Opens the session of a console request from its cookie and acts as the session's key from then on. A page asked
/// for without a live session is sent to sign in (and comes back after); a form posted without one is refused
/// (`403`), as it cannot carry a session's CSRF token. While PostgreSQL does not answer, the page says so (`503`)
/// at once.
///
/// A cookie costs PostgreSQL a lookup only when it is well formed (``ConsoleSessions/isWellFormed(_:)``), and an
/// unknown one counts as a failed authentication of the client's address, the API's budget shared: once it is
/// spent, cookies are answered `429` without a lookup, as guessed keys are.
struct ConsoleSessionMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    let sessions: ConsoleSessions
    let databaseWatch: DatabaseWatch
    let renderer: ConsoleRenderer
    let trustedProxies: TrustedProxies
    let failedAuthentications: RateLimiter<String>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let sessions = self.sessions
        var session: ConsoleSessions.Session?
        let isHTTPS = self.trustedProxies.isHTTPS(request, peer: context.remoteAddress?.ipAddress)
        if let token = Console.cookie(Console.sessionCookie, of: request, isHTTPS: isHTTPS), ConsoleSessions.isWellFormed(token) {
            let address = self.trustedProxies.rateLimitKey(peer: context.remoteAddress?.ipAddress, headers: request.headers)
            if let address, case .limited(let retryAfter) = self.failedAuthentications.check(address) {
                return self.tooManyFailures(retryAfter: retryAfter)
            }
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
            if session == nil, let address { _ = self.failedAuthentications.take(for: address) }
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

    /// `429`: the address spent its failed authentications.
    private func tooManyFailures(retryAfter: Int) -> Response {
        let page = ConsolePage.problem(
            .tooManyRequests,
            code: "rate_limited",
            message: "too many unknown sessions or keys from this address; retry after \(retryAfter) s",
            title: "Too many attempts"
        )
        var response = self.renderer.response(page, session: nil)
        response.headers[.retryAfter] = String(retryAfter)
        return response
    }
}
