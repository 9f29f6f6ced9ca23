import HTTPTypes
import Hummingbird

/// Tells browsers that reached Livecast over https (``TrustedProxies/isHTTPS(_:peer:)``) to use nothing else for a
/// year (`Strict-Transport-Security`), so a console session's cookie is never offered over plain http. Plain-http
/// answers (a laptop's demo) carry no such header, as browsers would ignore it.
struct StrictTransportSecurityMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    /// One year, the common choice.
    static let value = "max-age=31536000"

    let trustedProxies: TrustedProxies

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        if self.trustedProxies.isHTTPS(request, peer: context.remoteAddress?.ipAddress) {
            response.headers[.strictTransportSecurity] = Self.value
        }
        return response
    }
}
