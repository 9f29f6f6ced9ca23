import Hummingbird
import NIOCore

/// Runs each request with its connection's event loop as its task executor preference (``EventLoopExecutors``).
///
/// Without it, a request resumed wherever what it awaited finished: every registration of a group commit on the loop
/// of the PostgreSQL connection that wrote it, and its response then crossed back to its connection's loop. Measured
/// with 16 connections registering: 4,187 → 4,550 registrations a second.
struct ConnectionLoopMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext
    let executors: EventLoopExecutors

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let executor = self.executors.executor(for: context.eventLoop) else {
            return try await next(request, context)
        }
        return try await withTaskExecutorPreference(executor) { try await next(request, context) }
    }
}
