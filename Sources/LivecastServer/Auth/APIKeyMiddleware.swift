import HTTPTypes
import Hummingbird
import LivecastStore

/// Authenticates `Authorization: Bearer lc_…` on every `/v1` route and rate-limits per key; the routes then check
/// the app and role through ``AppScope``. A client address whose keys keep failing is refused for a while before its
/// keys are even looked up.
struct APIKeyMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    let keys: APIKeys
    /// Requests per API key.
    let perKey: RateLimiter<Int64>
    /// Failed authentications per client IP address.
    let failures: RateLimiter<String>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let address = context.remoteAddress?.ipAddress
        if let address, case .limited(let retryAfter) = self.failures.check(address) {
            throw APIError.rateLimited("too many failed authentications from this address", retryAfter: retryAfter)
        }
        guard let caller = try await self.authenticate(request) else {
            if let address { _ = self.failures.take(for: address) }
            throw APIError.unauthenticated
        }
        if case .limited(let retryAfter) = self.perKey.take(for: caller.keyID) {
            throw APIError.rateLimited("this key is over its request rate", retryAfter: retryAfter)
        }
        var context = context
        context.caller = caller
        context.logger[metadataKey: "livecast.key_id"] = "\(caller.keyID)"
        return try await next(request, context)
    }

    /// The caller of a well-formed `Bearer` key that authenticates, else `nil`.
    private func authenticate(_ request: Request) async throws -> APIKeys.Caller? {
        guard let authorization = request.headers[.authorization] else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return try await self.keys.authenticate(String(parts[1]).trimmingCharacters(in: .whitespaces))
    }
}
