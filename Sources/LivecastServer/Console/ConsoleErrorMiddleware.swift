import Hummingbird
import Logging

/// Turns what a console page throws into a page that says what went wrong: the API's refusals with their status,
/// code, message and `Retry-After` (a `429`'s, a `503`'s); anything else as `500`, logged (never shown).
struct ConsoleErrorMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    let renderer: ConsoleRenderer
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            var page = ConsolePage.problem(error.status, code: error.code, message: error.message)
            page.retryAfter = error.headers[.retryAfter]
            return self.renderer.response(page, session: context.consoleSession)
        } catch let error as HTTPError where error.status == .notFound {
            return self.problem(.notFound, code: "not_found", message: "there is no such console page", context: context)
        } catch {
            context.logger.error("a console page failed", metadata: APIErrorMiddleware.metadata(error))
            return self.problem(.internalServerError, code: "internal", message: "the page could not be made; see the server's log", context: context)
        }
    }

    private func problem(_ status: HTTPResponse.Status, code: String, message: String, context: Context) -> Response {
        self.renderer.response(.problem(status, code: code, message: message), session: context.consoleSession)
    }
}
