import Foundation
import LivecastStore

/// An app as `GET /v1/apps/{bundleId}` shows it: never its signing key.
struct AppBody: Encodable {
    let bundleId: String
    let environment: String
    let teamId: String
    let keyId: String
    let priority10HourlyCap: Int?
    /// Present while the invalidation guard holds the app's sending.
    let sendingHeld: SendingHeld?

    /// Since when (UNIX seconds) and why the app's sending is held.
    struct SendingHeld: Encodable {
        let since: Int64
        let reason: String
    }

    init(_ app: Apps.App) {
        self.bundleId = app.bundleID
        self.environment = app.environment
        self.teamId = app.teamID
        self.keyId = app.keyID
        self.priority10HourlyCap = app.priority10HourlyCap
        self.sendingHeld = app.sendingHeld.map { SendingHeld(since: $0.since, reason: $0.reason) }
    }
}

/// `POST /v1/apps/{bundleId}/keys`.
struct CreateKeyBody: Decodable {
    let role: String
}

/// An API key as listed: its prefix, never its secret.
struct KeyBody: Encodable {
    let keyId: Int64
    let role: String
    let prefix: String
    let createdAt: Date
    let revokedAt: Date?

    init(_ key: APIKeys.Key) {
        self.keyId = key.id
        self.role = key.role.rawValue
        self.prefix = key.prefix
        self.createdAt = key.createdAt
        self.revokedAt = key.revokedAt
    }
}

/// A new key: the only time its full text is shown.
struct CreatedKeyBody: Encodable {
    let keyId: Int64
    let role: String
    let prefix: String
    let createdAt: Date
    /// `lc_<prefix>_<secret>`: keep it now, it cannot be shown again.
    let key: String
}

/// `GET /v1/apps/{bundleId}/keys`.
struct KeyListBody: Encodable {
    let keys: [KeyBody]
}
