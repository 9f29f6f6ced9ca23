import Hummingbird
import LivecastService
import LivecastStore
import Logging
import NIOCore
import PostgresNIO

/// Turns every error into the API's error body: ``APIError`` as is, the store's and APNs' refusals
/// through ``APIError``'s initializers, Hummingbird's own errors by status, and anything else into a logged, generic 500.
struct APIErrorMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as StoreError {
            throw APIError(error)
        } catch let refusal as APNsRefusal {
            throw APIError(refusal)
        } catch is NIOTooManyBytesError {
            throw APIError.bodyTooLarge(limit: context.maxUploadSize)
        } catch let error as HTTPError {
            switch error.status {
            case .notFound: throw APIError.notFound("no route \(request.method) \(request.uri.path)")
            case .contentTooLarge: throw APIError.bodyTooLarge(limit: context.maxUploadSize)
            case let status where (400..<500).contains(status.code):
                throw APIError(status, code: "bad_request", error.body ?? status.reasonPhrase)
            default:
                context.logger.error("Hummingbird error", metadata: ["error.status": "\(error.status.code)"])
                throw APIError.internalError
            }
        } catch {
            context.logger.error("Unexpected error", metadata: Self.metadata(error))
            throw APIError.internalError
        }
    }

    /// What is safe to log about an error: its type and, for PostgreSQL, the server's SQLSTATE and message, never
    /// the query's bound values (tokens).
    static func metadata(_ error: any Error) -> Logger.Metadata {
        var metadata: Logger.Metadata = ["error.type": "\(type(of: error))"]
        if let transaction = error as? PostgresTransactionError {
            let inner: (any Error)? = transaction.closureError ?? transaction.beginError ?? transaction.commitError
            if let inner { return Self.metadata(inner) }
        }
        if let error = error as? PSQLError {
            metadata["error.code"] = "\(error.code)"
            metadata["db.sqlstate"] = error.serverInfo?[.sqlState].map { "\($0)" }
            metadata["db.message"] = error.serverInfo?[.message].map { "\($0)" }
        } else {
            metadata["error.message"] = "\(error)"
        }
        return metadata
    }
}
