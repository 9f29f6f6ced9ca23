import Crypto
import Foundation
import HTTPTypes
import LivecastCore
import LivecastStore

/// Checks the identity assertions that let a client key's registration name a user.
///
/// A client key is published inside the app, so a `userId` it sends on its own word could be anyone's, and a start
/// aimed at that user would reach a stranger's phone. The app's backend vouches instead: it signs a short-lived JWT
/// (ES256, header `kid` naming one of the app's ``IdentityKeys``) with the claims `sub` (the user), `aud` (the app's
/// bundle id), `deviceId` (the request's `Livecast-Device-ID`: an assertion binds its user on that one device only,
/// so one copied off a device or a log cannot bind the user anywhere else), `exp` (at most ``longestLifetime``
/// ahead), optionally `iat` and `nbf` (not before); the app passes it on as `userAssertion`, and only its `sub` is
/// bound.
struct IdentityAssertions: Sendable {
    /// How far ahead an assertion's `exp` may lie: 24 hours.
    static let longestLifetime: TimeInterval = 86_400
    /// Clock difference forgiven between the backend that signs and Livecast: 60 seconds.
    static let leeway: TimeInterval = 60

    let keys: IdentityKeys

    /// The user a client key's registration binds: none without `userId` and `userAssertion`, else the assertion's
    /// `sub` once it checks out.
    /// - Parameters:
    ///   - userID: The body's `userId`; when given, the assertion's `sub` must be it.
    ///   - assertion: The body's `userAssertion`.
    ///   - deviceID: The request's `Livecast-Device-ID`.
    /// - Throws: ``APIError`` `403 user_assertion_required` for a `userId` without an assertion, `403
    ///   invalid_user_assertion` (saying why) for an assertion that does not check out.
    func user(
        named userID: String?,
        assertion: String?,
        appID: Int64,
        bundleID: String,
        deviceID: String,
        now: Date = Date()
    ) async throws
        -> String?
    {
        guard let assertion else {
            guard userID == nil else {
                throw APIError(
                    .forbidden,
                    code: "user_assertion_required",
                    "a client key names a user only with a userAssertion: a JWT the app's backend signs with an identity key",
                    field: "userAssertion"
                )
            }
            return nil
        }
        guard let token = CompactJWT(assertion) else { throw Self.invalid("it is not a compact JWT (three base64url parts)") }
        guard token.header["alg"] == .string("ES256"), let keyID = token.header["kid"]?.stringValue else {
            throw Self.invalid("its header must say alg ES256 and name an identity key as kid")
        }
        guard let pem = try await self.keys.publicKey(appID: appID, keyID: keyID),
            let key = try? P256.Signing.PublicKey(pemRepresentation: pem)
        else { throw Self.invalid("the app has no identity key \(keyID)") }
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: token.signature),
            key.isValidSignature(signature, for: token.signingInput)
        else { throw Self.invalid("its signature does not verify with identity key \(keyID)") }
        let subject = try Self.check(token.claims, bundleID: bundleID, deviceID: deviceID, now: now.timeIntervalSince1970)
        if let userID, userID != subject { throw Self.invalid("its sub is not the userId") }
        return subject
    }

    /// The `sub` of claims that hold for this app, device and time.
    private static func check(_ claims: [String: JSONValue], bundleID: String, deviceID: String, now: TimeInterval) throws -> String {
        guard let subject = claims["sub"]?.stringValue, !subject.isEmpty else { throw Self.invalid("it has no sub") }
        try InputLimits.checkIdentifier(subject, field: "userAssertion")
        let audiences: [String] =
            switch claims["aud"] {
            case .string(let audience): [audience]
            case .array(let items): items.compactMap(\.stringValue)
            default: []
            }
        guard audiences.contains(bundleID) else { throw Self.invalid("its aud must be the app's bundle id, \(bundleID)") }
        guard let expiry = claims["exp"]?.intValue else { throw Self.invalid("it has no exp") }
        guard TimeInterval(expiry) > now - Self.leeway else { throw Self.invalid("it expired") }
        guard TimeInterval(expiry) <= now + Self.longestLifetime + Self.leeway else {
            throw Self.invalid("its exp is more than 24 hours ahead: assertions must be short-lived")
        }
        if let issuedAt = claims["iat"] {
            guard let issued = issuedAt.intValue, TimeInterval(issued) <= now + Self.leeway else { throw Self.invalid("its iat is in the future") }
        }
        if let notBefore = claims["nbf"] {
            guard let start = notBefore.intValue, TimeInterval(start) <= now + Self.leeway else { throw Self.invalid("its nbf is in the future") }
        }
        guard let device = claims["deviceId"] else {
            throw Self.invalid("it has no deviceId: an assertion names the one device it binds its user on, the Livecast-Device-ID")
        }
        guard device.stringValue == deviceID else { throw Self.invalid("its deviceId is not the Livecast-Device-ID") }
        return subject
    }

    private static func invalid(_ why: String) -> APIError {
        APIError(.forbidden, code: "invalid_user_assertion", "the userAssertion does not hold: \(why)", field: "userAssertion")
    }
}
