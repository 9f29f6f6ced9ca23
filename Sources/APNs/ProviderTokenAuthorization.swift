/// The provider token as the transport's `authorization` header, and what happens when APNs calls it expired.
///
/// docs/ARCHITECTURE.md, invariant 8: after `403 ExpiredProviderToken` the client re-signs the token and sends the request once
/// more. A token is never re-signed before it is 20 minutes old (``ProviderTokens/replace(rejected:)``) and every
/// connection of a client sends the one current token, so no connection changes its token more than once per 20
/// minutes (APNs answers `429 TooManyProviderTokenUpdates` to that).
struct ProviderTokenAuthorization: HTTP2Authorization {
    let tokens: ProviderTokens

    func headerValue() -> String {
        "bearer \(self.tokens.token().jwt)"
    }

    /// Whether `exchange` goes out once more after APNs answered it `outcome`: yes after `ExpiredProviderToken`
    /// when a newer token may be used, that is when the token it carried was already replaced, or when it is the
    /// current one and old enough to re-sign (which this does). A request is sent again at most once this way.
    func mayResend(_ exchange: HTTP2Exchange, answered outcome: APNsOutcome) -> Bool {
        guard outcome.status == 403, outcome.reason == .expiredProviderToken, !exchange.isResend, let rejected = exchange.authorization else {
            return false
        }
        return self.renew(rejected: rejected)
    }

    /// - Returns: Whether a token newer than `rejected` (a header value) is current now.
    private func renew(rejected: String) -> Bool {
        let current = self.tokens.token()
        guard rejected == "bearer \(current.jwt)" else { return true }
        return self.tokens.replace(rejected: current) != nil
    }
}
