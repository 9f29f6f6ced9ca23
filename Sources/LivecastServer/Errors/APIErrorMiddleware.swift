import Hummingbird
import LivecastService
import LivecastStore
import Logging
import NIOCore
import PostgresNIO

/// Turns every error into the API's error body: ``APIError`` as is, the store's and APNs' refusals
/// through ``APIError``'s initializers, Hummingbird's own errors by status, PostgreSQL's refusals of a value as
/// `422 invalid`, a lost or refused database connection and a statement over the statement timeout as
/// `503 database_unavailable`, and anything else into a logged, generic 500.
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
        } catch let error where Self.isDataError(error) {
            // The last line of defence: ``InputLimits`` refuses such values first, naming the field.
            context.logger.warning("PostgreSQL refused a value", metadata: Self.metadata(error))
            throw APIError.invalid("a value is out of what Livecast can store (too long, out of range, or holding a NUL)")
        } catch let error where Self.isTimeout(error) {
            context.logger.warning("A statement ran over PostgreSQL's statement timeout", metadata: Self.metadata(error))
            throw APIError.databaseTimedOut
        } catch is CommitInDoubt {
            context.logger.warning("PostgreSQL went away while committing a request and cannot tell whether it was kept")
            throw APIError.commitInDoubt
        } catch let error where StoreError.isConnectionLoss(error) {
            context.logger.warning("PostgreSQL went away during a request", metadata: Self.metadata(error))
            throw APIError.databaseUnavailable
        } catch {
            context.logger.error("Unexpected error", metadata: Self.metadata(error))
            throw APIError.internalError
        }
    }

    /// Whether PostgreSQL refused a value the request carried: SQLSTATE class 22 (data exception: NUL in text,
    /// numeric out of range, string too long, …) or 54000 (program limit exceeded: an index row over its size).
    static func isDataError(_ error: any Error) -> Bool {
        guard let sqlState = Self.postgresError(error)?.serverInfo?[.sqlState] else { return false }
        return sqlState.hasPrefix("22") || sqlState == "54000"
    }

    /// Whether PostgreSQL cancelled a statement that ran too long: SQLSTATE 57014 (`query_canceled`, the statement
    /// timeout) or 55P03 (`lock_not_available`, a lock timeout).
    static func isTimeout(_ error: any Error) -> Bool {
        guard let sqlState = Self.postgresError(error)?.serverInfo?[.sqlState] else { return false }
        return sqlState == "57014" || sqlState == "55P03"
    }

    /// PostgreSQL's error, also from inside a transaction's error.
    private static func postgresError(_ error: any Error) -> PSQLError? {
        if let transaction = error as? PostgresTransactionError {
            return transaction.cause.flatMap(Self.postgresError)
        }
        return error as? PSQLError
    }

    /// What is safe to log about an error: its type and, for PostgreSQL, the server's SQLSTATE and message, never
    /// the query's bound values (tokens).
    static func metadata(_ error: any Error) -> Logger.Metadata {
        var metadata: Logger.Metadata = ["error.type": "\(type(of: error))"]
        if let transaction = error as? PostgresTransactionError {
            if let cause = transaction.cause { return Self.metadata(cause) }
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
