import Crypto
import Foundation
import NIOConcurrencyHelpers

/// Signs and caches the provider token (ES256 JWT) that every connection of a pool sends.
///
/// Apple's rules (APNS-REFERENCE §5.4): refresh no more often than every 20 minutes and no less often than every
/// 60; a token older than an hour is refused. This signs a new token once the current one is
/// ``refreshAge`` old, and early only after APNs answered `ExpiredProviderToken` and the current token is at least
/// ``minimumAge`` old. Connections take whatever token is current, so none changes its token more often.
public final class ProviderTokens: Sendable {
    /// A signed token and when it was issued.
    public struct Token: Sendable, Hashable {
        /// The JWT, as sent after `bearer `.
        public let jwt: String
        /// `iat`, in seconds since 1970.
        public let issuedAt: Int
    }

    /// A token is replaced once it is this old: 50 minutes.
    public static let refreshAge = 50 * 60
    /// A token is never replaced before it is this old: 20 minutes.
    public static let minimumAge = 20 * 60

    private let credentials: APNsCredentials
    private let clock: any WallClock
    private let current: NIOLockedValueBox<Token?>

    /// Creates a token source.
    /// - Parameters:
    ///   - credentials: The signing key and its ids.
    ///   - clock: The time tokens are dated with. Defaults to the system clock.
    public init(credentials: APNsCredentials, clock: any WallClock = SystemWallClock()) {
        self.credentials = credentials
        self.clock = clock
        self.current = NIOLockedValueBox(nil)
    }

    /// The token to send now: the cached one, or a new one when it is ``refreshAge`` old.
    public func token() -> Token {
        let now = self.clock.secondsSince1970
        return self.current.withLockedValue { current in
            if let token = current, now - token.issuedAt < Self.refreshAge { return token }
            let token = self.sign(issuedAt: now)
            current = token
            return token
        }
    }

    /// Called after APNs answered `ExpiredProviderToken` to `rejected`.
    /// - Returns: A newer token to retry with, or `nil` when none may be made yet (the current one is younger
    ///   than ``minimumAge``) and the request should fail.
    public func replace(rejected: Token) -> Token? {
        let now = self.clock.secondsSince1970
        return self.current.withLockedValue { current in
            if let token = current, token != rejected { return token }
            guard now - rejected.issuedAt >= Self.minimumAge else { return nil }
            let token = self.sign(issuedAt: now)
            current = token
            return token
        }
    }

    private func sign(issuedAt: Int) -> Token {
        let header = Self.base64URL(Data(#"{"alg":"ES256","kid":"\#(self.credentials.keyID)"}"#.utf8))
        let claims = Self.base64URL(Data(#"{"iss":"\#(self.credentials.teamID)","iat":\#(issuedAt)}"#.utf8))
        let signingInput = "\(header).\(claims)"
        // Signing with a valid P-256 key over a digest does not fail.
        let signature = try! self.credentials.privateKey.signature(for: Data(signingInput.utf8))
        return Token(jwt: "\(signingInput).\(Self.base64URL(signature.rawRepresentation))", issuedAt: issuedAt)
    }

    private static func base64URL(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
