import Crypto
import Hummingbird
import LivecastStore
import Logging

/// `PUT /v1/apps/{bundleId}/identity-keys/{keyId}`: a P-256 public key, PEM.
struct IdentityKeyBody: Decodable, CheckedBody {
    let publicKey: String

    func checkLimits() throws {
        guard self.publicKey.utf8.count <= 1024 else { throw APIError.invalid("publicKey is over 1,024 bytes", field: "publicKey") }
    }
}

/// `GET /v1/apps/{bundleId}/identity-keys`.
struct IdentityKeyListBody: ResponseEncodable {
    let identityKeys: [IdentityKeys.Key]
}

/// `PUT`, `DELETE /v1/apps/{bundleId}/identity-keys/{keyId}` and `GET …/identity-keys` (admin): the public keys the
/// app's backend signs identity assertions with (``IdentityAssertions``).
struct IdentityKeyController: APIController {
    let identityKeys: IdentityKeys

    func addRoutes(to routes: RouteRegistrar) {
        routes.app(.put, "/v1/apps/{bundleId}/identity-keys/{keyId}", role: .admin) { request, context, scope in
            let keyID = try context.parameters.decoded("keyId")
            guard IdentityKeys.isValid(keyID: keyID) else {
                throw APIError.invalid("keyId must be 1 to 64 letters, digits, '.', '_' or '-'", field: "keyId")
            }
            let body = try await request.decodeJSON(as: IdentityKeyBody.self, context: context)
            guard let key = try? P256.Signing.PublicKey(pemRepresentation: body.publicKey) else {
                throw APIError.invalid("publicKey must be a P-256 (ES256) public key in PEM: -----BEGIN PUBLIC KEY-----…", field: "publicKey")
            }
            let (stored, isNew) = try await self.identityKeys.logging(to: context.logger)
                .put(appID: scope.appID, keyID: keyID, publicKey: key.pemRepresentation)
            context.logger.info("identity key \(isNew ? "added" : "replaced")", metadata: ["livecast.identity_key": "\(keyID)"])
            return EditedResponse(status: isNew ? .created : .ok, response: stored)
        }
        routes.app(.get, "/v1/apps/{bundleId}/identity-keys", role: .admin) { _, context, scope in
            IdentityKeyListBody(identityKeys: try await self.identityKeys.logging(to: context.logger).list(appID: scope.appID))
        }
        routes.app(.delete, "/v1/apps/{bundleId}/identity-keys/{keyId}", role: .admin) { _, context, scope in
            let keyID = try context.parameters.decoded("keyId")
            guard try await self.identityKeys.logging(to: context.logger).delete(appID: scope.appID, keyID: keyID) else {
                throw APIError.notFound("no identity key \(keyID)", field: "keyId")
            }
            return Response(status: .noContent)
        }
    }
}
