import HTTPTypes
import Hummingbird
import LivecastStore
import Logging

/// Authenticates `Authorization: Bearer lc_…` on every `/v1` route and rate-limits per key; the routes then check
/// the app and role through ``AppScope``.
///
/// Failed authentications are counted twice: against the client's address (the peer's, or the one a trusted proxy
/// forwarded: ``TrustedProxies``) and against the presented key's prefix. A client whose address has spent its
/// budget is refused (`429`) before its keys are even looked up, except a key that has authenticated before and not
/// failed since (``KnownKeys``): a proxy that is not in the trusted list puts every client behind one address. A
/// prefix that has spent its budget only turns that prefix's failures into `429`s: a valid key is always looked up,
/// so guesses at one key never lock out another, nor a valid key. A revoked key fails like an unknown one and is
/// counted like one, so the answers do not tell the two apart.
struct APIKeyMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    let keys: APIKeys
    /// The callers of keys that authenticated, forgotten as soon as PostgreSQL says a key changed.
    let keyCache: KeyCache
    /// Requests per API key.
    let perKey: RateLimiter<Int64>
    /// Failed authentications per client address.
    let failuresByAddress: RateLimiter<String>
    /// Failed authentications per presented key prefix.
    let failuresByPrefix: RateLimiter<String>
    /// Whose `X-Forwarded-For` gives the client's address.
    let trustedProxies: TrustedProxies
    /// Answers `503` instead of waiting when PostgreSQL does not answer the key lookup.
    let databaseWatch: DatabaseWatch
    /// The rate limit per client address that client keys have instead of the per-key one.
    let clients: ClientKeys
    /// The keys that have authenticated and not failed since.
    private let knownKeys = KnownKeys()

    init(
        keys: APIKeys,
        keyCache: KeyCache,
        perKey: RateLimiter<Int64>,
        failuresByAddress: RateLimiter<String>,
        failures: RateLimit,
        trustedProxies: TrustedProxies,
        databaseWatch: DatabaseWatch,
        clients: ClientKeys
    ) {
        self.keys = keys
        self.keyCache = keyCache
        self.perKey = perKey
        self.failuresByAddress = failuresByAddress
        self.failuresByPrefix = RateLimiter(configuration: failures)
        self.trustedProxies = trustedProxies
        self.databaseWatch = databaseWatch
        self.clients = clients
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let caller = context.caller {
            // The console's in-process call, as the key its session was opened with (checked at sign-in and on each
            // page: a revoked key's session is gone).
            try self.limitRate(of: caller, request, context)
            return try await next(request, context)
        }
        let presented = Self.bearerKey(request).map(PresentedKey.init)
        let isKnown = presented.map(self.knownKeys.contains) ?? false
        // The client's address is worked out only where failures count: for a known key, only if it fails.
        if !isKnown, let address = self.clientAddress(request, context), case .limited(let retryAfter) = self.failuresByAddress.check(address) {
            throw APIError.rateLimited("too many failed authentications", retryAfter: retryAfter)
        }
        var caller: APIKeys.Caller?
        if let presented {
            caller = try await self.authenticate(presented, logger: context.logger)
        }
        guard let caller else {
            try self.recordFailure(presented, address: self.clientAddress(request, context))
            throw APIError.unauthenticated
        }
        if let presented, !isKnown { self.knownKeys.insert(presented) }
        var context = context
        if caller.role == .client { context.clientAddress = self.clientAddress(request, context) }
        try self.limitRate(of: caller, request, context)
        context.caller = caller
        context.logger[metadataKey: "livecast.key_id"] = "\(caller.keyID)"
        return try await next(request, context)
    }

    /// The key the client's address is limited under (``TrustedProxies/rateLimitKey(peer:headers:)``).
    private func clientAddress(_ request: Request, _ context: Context) -> String? {
        self.trustedProxies.rateLimitKey(peer: context.remoteAddress?.ipAddress, headers: request.headers)
    }

    /// Spends one request of the key's budget; a client key's, shared by all of its app's devices, of its client
    /// address's instead, here in this process (and across every instance, with its device's, once a route reads the
    /// device: ``ClientKeys``).
    /// - Throws: `429` when it has none left.
    private func limitRate(of caller: APIKeys.Caller, _ request: Request, _ context: Context) throws {
        guard caller.role != .client else { return try self.clients.limitRate(ofAddress: context.clientAddress) }
        if case .limited(let retryAfter) = self.perKey.take(for: caller.keyID) {
            throw APIError.rateLimited("this key is over its request rate", retryAfter: retryAfter)
        }
    }

    /// The caller of a presented key: remembered, or looked up in PostgreSQL (then remembered).
    private func authenticate(_ presented: PresentedKey, logger: Logger) async throws -> APIKeys.Caller? {
        if let caller = self.keyCache.caller(for: presented) { return caller }
        let generation = self.keyCache.generation
        let keys = self.keys.logging(to: logger)
        let caller = try await self.databaseWatch.guarding { try await keys.authenticate(presented.text) }
        if let caller { self.keyCache.remember(caller, for: presented, since: generation) }
        return caller
    }

    /// Spends one failure of the address's and the prefix's budgets, forgets the key, and throws `429` when the
    /// prefix had none left.
    private func recordFailure(_ presented: PresentedKey?, address: String?) throws {
        if let address { _ = self.failuresByAddress.take(for: address) }
        guard let presented else { return }
        self.knownKeys.remove(presented)
        guard let prefix = APIKeys.prefix(of: presented.text) else { return }
        if case .limited(let retryAfter) = self.failuresByPrefix.take(for: prefix) {
            throw APIError.rateLimited("too many failed authentications", retryAfter: retryAfter)
        }
    }

    /// The key of a `Bearer` authorization (the scheme in any case, then a space), if the request has one, without
    /// the spaces and tabs around it. Read byte by byte: Foundation's lower-casing and trimming showed in a request's
    /// profile (docs/PERFORMANCE.md).
    private static func bearerKey(_ request: Request) -> String? {
        guard let authorization = request.headers[.authorization] else { return nil }
        let bytes = authorization.utf8
        let scheme = "bearer ".utf8
        guard bytes.count > scheme.count, zip(bytes, scheme).allSatisfy({ $0 | 0x20 == $1 }) else { return nil }
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var key = bytes.dropFirst(scheme.count).drop(while: isBlank)
        while let last = key.last, isBlank(last) { key = key.dropLast() }
        return String(Substring(key))
    }
}
