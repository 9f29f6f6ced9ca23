import Foundation
import HTTPTypes
import Hummingbird
import LivecastCore
import LivecastStore
import Logging

extension Console {
    /// `GET` and `POST /console/login`, `POST /console/logout`.
    func addSignInRoutes(to router: Router<APIRequestContext>) {
        router.get("/console/login") { request, context in
            let token = ConsoleSessions.newToken()
            var page = ConsolePage(template: "login", title: "Sign in", section: nil)
            page.model = ["loginCsrf": token, "next": Self.safeNext(request.uri.queryParameters.get("next"))]
            if request.uri.queryParameters.get("signedOut") != nil { page.notice = "You are signed out." }
            var response = self.renderer.response(page, session: nil)
            response.setCookie(self.cookie(Self.signInCookie, token, path: "/console/login", request: request, context: context))
            return response
        }
        router.post("/console/login") { request, context in
            try await self.signIn(request, context: context)
        }
        router.post("/console/logout") { request, context in
            let form = try await ConsoleForm(request)
            let sessions = self.sessions
            guard let token = self.cookie(Self.sessionCookie, of: request, context: context),
                let session = try await self.databaseWatch.guarding({ try await sessions.session(token: token) })
            else {
                return self.renderer.response(.signedOut, session: nil)
            }
            guard form.carriesToken(of: session) else {
                let refusal = Self.missingToken
                return self.renderer.response(.problem(refusal.status, code: refusal.code, message: refusal.message), session: session)
            }
            try await self.databaseWatch.guarding { try await sessions.close(token: token) }
            context.logger.info("console sign-out", metadata: ["livecast.key_id": "\(session.caller.keyID)"])
            var response = Self.redirect(to: "/console/login?signedOut=1")
            response.setCookie(self.cookie(Self.sessionCookie, "", path: "/console", request: request, context: context, maxAge: 0))
            return response
        }
    }

    /// Checks the key as the API does (through `GET /v1/key`: the same failure counting and rate limits), then opens
    /// a session; the key itself goes no further.
    private func signIn(_ request: Request, context: APIRequestContext) async throws -> Response {
        let form = try await ConsoleForm(request)
        let next = Self.safeNext(form["next"])
        var page = ConsolePage(template: "login", title: "Sign in", section: nil)
        let token = ConsoleSessions.newToken()
        page.model = ["loginCsrf": token, "next": next]
        guard let expected = self.cookie(Self.signInCookie, of: request, context: context), let presented = form["csrf"],
            ConsoleSessions.tokensMatch(expected, presented)
        else {
            page.status = .forbidden
            page.error = (Self.missingToken.code, "the sign-in form did not carry its security token; reload the page and try again")
            return self.signInPage(page, token: token, request: request, context: context)
        }
        guard let key = form["key"] else {
            page.status = .unprocessableContent
            page.error = ("invalid", "enter an API key (lc_…)")
            return self.signInPage(page, token: token, request: request, context: context)
        }
        var headers: HTTPFields = [.authorization: "Bearer \(key)"]
        for forwarded in request.headers[values: .xForwardedFor] { headers.append(HTTPField(name: .xForwardedFor, value: forwarded)) }
        // The sign-in route has no caller: the API authenticates the key from the header, as for any client.
        let answer = try await self.api.call(.get, "/v1/key", headers: headers, context: context)
        guard answer.isSuccess, let keyID = answer.json["keyId"]?.intValue else {
            page.status = answer.status
            page.error =
                answer.status == .unauthorized ? ("unauthenticated", "that key was not accepted: it is unknown, mistyped or revoked") : answer.error
            page.retryAfter = answer.retryAfter
            return self.signInPage(page, token: token, request: request, context: context)
        }
        let sessions = self.sessions
        guard let (sessionToken, session) = try await self.databaseWatch.guarding({ try await sessions.open(keyID: Int64(keyID)) }) else {
            page.status = .unauthorized
            page.error = ("unauthenticated", "that key was revoked")
            return self.signInPage(page, token: token, request: request, context: context)
        }
        context.logger.info("console sign-in", metadata: ["livecast.key_id": "\(keyID)", "livecast.role": "\(session.caller.role.rawValue)"])
        var response = Self.redirect(to: next)
        response.setCookie(
            self.cookie(
                Self.sessionCookie,
                sessionToken,
                path: "/console",
                request: request,
                context: context,
                maxAge: Int(ConsoleSessions.lifetime.components.seconds)
            )
        )
        response.setCookie(self.cookie(Self.signInCookie, "", path: "/console/login", request: request, context: context, maxAge: 0))
        return response
    }

    private func signInPage(_ page: ConsolePage, token: String, request: Request, context: APIRequestContext) -> Response {
        var response = self.renderer.response(page, session: nil)
        response.setCookie(self.cookie(Self.signInCookie, token, path: "/console/login", request: request, context: context))
        return response
    }

    /// An HttpOnly, SameSite=Strict cookie. Over https (``TrustedProxies/isHTTPS(_:peer:)``) it is Secure and
    /// named `__Host-…` with the path `/`, so that no other host or path can set or shadow it; over plain http (a
    /// laptop's demo) it keeps its name and `path`.
    private func cookie(_ name: String, _ value: String, path: String, request: Request, context: APIRequestContext, maxAge: Int? = nil) -> Cookie {
        let isSecure = self.trustedProxies.isHTTPS(request, peer: context.remoteAddress?.ipAddress)
        return Cookie(
            name: isSecure ? Self.hostPrefix + name : name,
            value: value,
            maxAge: maxAge,
            path: isSecure ? "/" : path,
            secure: isSecure,
            httpOnly: true,
            sameSite: .strict
        )
    }

    /// The prefix of cookies set over https: the browser accepts them only Secure, from this host, for `/`.
    static let hostPrefix = "__Host-"

    /// A console cookie's value, as ``cookie(_:of:isHTTPS:)`` reads it.
    private func cookie(_ name: String, of request: Request, context: APIRequestContext) -> String? {
        Self.cookie(name, of: request, isHTTPS: self.trustedProxies.isHTTPS(request, peer: context.remoteAddress?.ipAddress))
    }

    /// A console cookie's value: over https, only under its `__Host-` name, which a browser takes only from this host
    /// over https; the plain name is read over plain http only. So over https no cookie set by another host (a
    /// sibling subdomain's, or one written over plain http) can stand in for the console's: a session or sign-in
    /// token planted that way is not read.
    static func cookie(_ name: String, of request: Request, isHTTPS: Bool) -> String? {
        request.cookies[isHTTPS ? Self.hostPrefix + name : name]?.value
    }

    /// Where to go after signing in: a console path, never another site.
    private static func safeNext(_ next: String?) -> String {
        guard let next, next.hasPrefix("/console"), !next.hasPrefix("//"), !next.contains("\\") else { return "/console" }
        return next
    }
}

extension HTTPField.Name {
    /// `X-Forwarded-Proto`: the scheme the client used, as a proxy says.
    static let xForwardedProto = HTTPField.Name("X-Forwarded-Proto")!
}
