import HTTPTypes
import Hummingbird
import LivecastStore
import Synchronization

/// Authenticates `Authorization: Bearer lc_…` on every `/v1` route and rate-limits per key; the routes then check
/// the app and role through ``AppScope``. A client address whose keys keep failing is refused for a while before
/// its keys are even looked up, except keys whose prefix has authenticated before: behind a shared proxy, one
/// misconfigured client does not lock the others out.
struct APIKeyMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    let keys: APIKeys
    /// Requests per API key.
    let perKey: RateLimiter<Int64>
    /// Failed authentications per client IP address.
    let failures: RateLimiter<String>
    /// Answers `503` instead of waiting when PostgreSQL does not answer the key lookup.
    let databaseWatch: DatabaseWatch
    /// The prefixes of keys that have authenticated (at most one per key in the database).
    private let knownPrefixes = KnownPrefixes()

    init(keys: APIKeys, perKey: RateLimiter<Int64>, failures: RateLimiter<String>, databaseWatch: DatabaseWatch) {
        self.keys = keys
        self.perKey = perKey
        self.failures = failures
        self.databaseWatch = databaseWatch
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let presented = Self.bearerKey(request)
        let prefix = presented.flatMap(APIKeys.prefix(of:))
        let address = context.remoteAddress?.ipAddress
        if let address, !(prefix.map(self.knownPrefixes.contains) ?? false), case .limited(let retryAfter) = self.failures.check(address) {
            throw APIError.rateLimited("too many failed authentications from this address", retryAfter: retryAfter)
        }
        var caller: APIKeys.Caller?
        if let presented {
            let keys = self.keys
            caller = try await self.databaseWatch.guarding { try await keys.authenticate(presented) }
        }
        guard let caller else {
            if let address { _ = self.failures.take(for: address) }
            throw APIError.unauthenticated
        }
        if let prefix { self.knownPrefixes.insert(prefix) }
        if case .limited(let retryAfter) = self.perKey.take(for: caller.keyID) {
            throw APIError.rateLimited("this key is over its request rate", retryAfter: retryAfter)
        }
        var context = context
        context.caller = caller
        context.logger[metadataKey: "livecast.key_id"] = "\(caller.keyID)"
        return try await next(request, context)
    }

    /// The key of a `Bearer` authorization, if the request has one.
    private static func bearerKey(_ request: Request) -> String? {
        guard let authorization = request.headers[.authorization] else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return String(parts[1]).trimmingCharacters(in: .whitespaces)
    }
}

/// Key prefixes seen to authenticate, shared by the middleware's requests.
private final class KnownPrefixes: Sendable {
    private let prefixes = Mutex<Set<String>>([])

    func contains(_ prefix: String) -> Bool { self.prefixes.withLock { $0.contains(prefix) } }
    func insert(_ prefix: String) { _ = self.prefixes.withLock { $0.insert(prefix) } }
}
