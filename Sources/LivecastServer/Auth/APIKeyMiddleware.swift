import HTTPTypes
import Hummingbird
import LivecastStore

/// Authenticates `Authorization: Bearer lc_…` on every `/v1` route and rate-limits per key; the routes then check
/// the app and role through ``AppScope``.
struct APIKeyMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    let keys: APIKeys
    let rateLimiter: RateLimiter

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let authorization = request.headers[.authorization] else { throw APIError.unauthenticated }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer",
            let caller = try await self.keys.authenticate(String(parts[1]).trimmingCharacters(in: .whitespaces))
        else {
            throw APIError.unauthenticated
        }
        if case .limited(let retryAfter) = self.rateLimiter.take(for: caller.keyID) {
            throw APIError(
                .tooManyRequests,
                code: "rate_limited",
                "this key is over its request rate; retry after \(retryAfter) s",
                headers: [.retryAfter: String(retryAfter)]
            )
        }
        var context = context
        context.caller = caller
        context.logger[metadataKey: "livecast.key_id"] = "\(caller.keyID)"
        return try await next(request, context)
    }
}
