import Foundation

/// One connection's provider-token history: APNs binds a connection to the first key used on it and limits how
/// often the token may change (APNS-REFERENCE §5.4).
///
/// Lives on the connection's event loop; not shared.
struct ConnectionAuthentication {
    /// The token string last accepted on this connection, the header that carried it, and when it was first
    /// accepted.
    private var current: (authorization: String, jwt: String, token: ProviderToken, acceptedAt: Int)?
    /// Whether a request on this connection has authenticated yet.
    private(set) var hasAuthenticated = false

    /// Tokens older than this are expired.
    static let maximumTokenAge = 3600
    /// A connection's token may change at most once per this many seconds.
    static let minimumTokenChangeInterval = 20 * 60

    /// Authenticates one request's `authorization` header.
    /// - Parameters:
    ///   - authorization: The header, or `nil` when absent.
    ///   - trustedKeys: The keys the emulator trusts, by ``ProviderToken/keyName(teamID:keyID:)``.
    ///   - now: The current time in seconds since 1970.
    /// - Returns: `true` when this is the first request on the connection to authenticate.
    ///   - environment: The emulator's environment: a key trusted only for the other is refused.
    /// - Throws: `MissingProviderToken`, `InvalidProviderToken`, `ExpiredProviderToken`, `UnrelatedKeyIdInToken`,
    ///   `BadEnvironmentKeyIdInToken` (403) or `TooManyProviderTokenUpdates` (429).
    mutating func authenticate(
        authorization: String?,
        trustedKeys: [String: TrustedKey],
        environment: String,
        now: Int
    ) throws(APNsFailure) -> Bool {
        guard let authorization, let jwt = self.jwt(in: authorization) else {
            throw APNsFailure(403, "MissingProviderToken")
        }
        let token: ProviderToken
        if let current, current.jwt == jwt {
            token = current.token
        } else {
            token = try ProviderToken.verify(jwt, trustedKeys: trustedKeys)
        }
        if let keyEnvironment = trustedKeys[ProviderToken.keyName(teamID: token.teamID, keyID: token.keyID)]?.environment,
            keyEnvironment != environment
        {
            throw APNsFailure(403, "BadEnvironmentKeyIdInToken")
        }
        guard now - token.issuedAt <= Self.maximumTokenAge else {
            throw APNsFailure(403, "ExpiredProviderToken")
        }
        if let current, current.jwt != jwt {
            guard current.token.teamID == token.teamID, current.token.keyID == token.keyID else {
                throw APNsFailure(403, "UnrelatedKeyIdInToken")
            }
            guard now - current.acceptedAt >= Self.minimumTokenChangeInterval else {
                throw APNsFailure(429, "TooManyProviderTokenUpdates")
            }
        }
        if self.current?.jwt != jwt {
            self.current = (authorization, jwt, token, now)
        }
        let isFirst = !self.hasAuthenticated
        self.hasAuthenticated = true
        return isFirst
    }

    /// The JWT in an `authorization` header (`bearer` and the token), or `nil` when there is none. A header equal to
    /// the one last accepted is not parsed again: clients send the same token on every request.
    private func jwt(in authorization: String) -> String? {
        if let current, current.authorization == authorization { return current.jwt }
        guard authorization.lowercased().hasPrefix("bearer ") else { return nil }
        let jwt = String(authorization.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
        return jwt.isEmpty ? nil : jwt
    }
}
