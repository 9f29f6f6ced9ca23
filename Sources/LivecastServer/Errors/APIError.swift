import Foundation
package import HTTPTypes
package import Hummingbird
import LivecastCore

/// An error the API answers with: a status and `{"error": {"code", "message", "field"?}}`.
package struct APIError: Error, HTTPResponseError, Hashable, CustomStringConvertible {
    package let status: HTTPResponse.Status
    /// A machine-readable code, such as `stale_timestamp`.
    package let code: String
    /// A sentence for people. Never holds a key, a token or a signing key.
    package let message: String
    /// The request field at fault, when one is.
    package let field: String?
    /// Extra headers, such as `Retry-After`.
    package let headers: HTTPFields

    package init(_ status: HTTPResponse.Status, code: String, _ message: String, field: String? = nil, headers: HTTPFields = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.headers = headers
    }

    package var description: String { "\(self.status.code) \(self.code): \(self.message)" }

    package func response(from request: Request, context: some RequestContext) throws -> Response {
        let body = Body(error: .init(code: self.code, message: self.message, field: self.field))
        let data = try JSONEncoder.sorted.encode(body)
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: self.status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    private struct Body: Encodable {
        struct Detail: Encodable {
            let code: String
            let message: String
            let field: String?
        }
        let error: Detail
    }
}

extension APIError {
    /// 400: the body is not JSON, a field has the wrong type, or a required field is missing.
    static func malformed(_ message: String, field: String? = nil) -> APIError {
        APIError(.badRequest, code: "malformed_request", message, field: field)
    }

    /// 401: no key, or one that does not authenticate.
    static let unauthenticated = APIError(
        .unauthorized,
        code: "unauthenticated",
        "give a valid API key as Authorization: Bearer lc_…",
        headers: [.wwwAuthenticate: "Bearer"]
    )

    /// 429: over a rate limit; `Retry-After` says when a request is allowed again.
    static func rateLimited(_ message: String, retryAfter: Int) -> APIError {
        APIError(.tooManyRequests, code: "rate_limited", "\(message); retry after \(retryAfter) s", headers: [.retryAfter: String(retryAfter)])
    }

    /// 403: the key's role does not allow the request.
    static func forbidden(needs role: String) -> APIError {
        APIError(.forbidden, code: "forbidden", "this needs a key with the \(role) role")
    }

    /// 404: nothing of that name, for the caller's app.
    static func notFound(_ message: String, field: String? = nil) -> APIError {
        APIError(.notFound, code: "not_found", message, field: field)
    }

    /// 422: well-formed but not acceptable.
    static func invalid(_ message: String, field: String? = nil) -> APIError {
        APIError(.unprocessableContent, code: "invalid", message, field: field)
    }

    /// 422: a timestamp further ahead of the server's clock than ``LivecastAPI/Configuration/maximumClockSkew``; it
    /// would hold back every later update of its target.
    static func timestampTooFarAhead(maximumSkew: Duration) -> APIError {
        APIError(
            .unprocessableContent,
            code: "timestamp_too_far_ahead",
            "timestamp is more than \(maximumSkew.wholeSeconds) s ahead of the server's clock",
            field: "timestamp"
        )
    }

    /// 413: the request body is over the cap.
    static func bodyTooLarge(limit: Int) -> APIError {
        APIError(.contentTooLarge, code: "payload_too_large", "the request body is over \(limit) bytes")
    }

    /// 413: a bulk import holds more rows than one request may.
    static func tooManyRows(_ count: Int, limit: Int) -> APIError {
        APIError(.contentTooLarge, code: "too_many_rows", "the import holds \(count) rows; the limit is \(limit) a request")
    }

    /// 500: anything unexpected; the details go to the log only.
    static let internalError = APIError(.internalServerError, code: "internal_error", "something went wrong on our side; it was logged")
}
