import Foundation
import HTTPTypes
import Hummingbird
import LivecastStore
import Mustache

/// Renders console pages: each page's template inside the layout (navigation, the signed-in key, sign-out), as
/// HTML with headers that keep it to itself (no framing, no sniffing, scripts and styles from the console only).
struct ConsoleRenderer: Sendable {
    private let library: MustacheLibrary

    /// Parses every template; one that does not parse is a programming error (the console's tests render each).
    init() {
        var library = MustacheLibrary()
        for (name, text) in ConsoleTemplates.all {
            do {
                try library.register(text, named: name)
            } catch {
                preconditionFailure("the console's template \(name) does not parse: \(error)")
            }
        }
        self.library = library
    }

    /// The page as a response, for the signed-in session (`nil` on the sign-in page).
    func response(_ page: ConsolePage, session: ConsoleSessions.Session?) -> Response {
        var model = page.model
        model["pageTitle"] = page.title
        if let notice = page.notice { model["notice"] = notice }
        if let error = page.error { model["problem"] = ["code": error.code, "message": error.message] }
        if let session {
            model["session"] = [
                "bundleId": session.caller.bundleID,
                "role": session.caller.role.rawValue,
                "csrf": session.csrfToken,
            ]
            model["csrf"] = session.csrfToken
            model["canOperate"] = session.caller.role >= .operator
            model["isAdmin"] = session.caller.role >= .admin
            model["nav"] = ConsolePage.Section.allCases.filter { session.caller.role >= $0.role }.map { section in
                ["label": section.label, "href": section.path, "current": section == page.section] as [String: Any]
            }
        }
        let html = self.library.render(Self.flagged(model), withTemplate: page.template) ?? "template \(page.template) is missing"
        return Self.html(html, status: page.status, headers: page.retryAfter.map { [.retryAfter: $0] } ?? [:])
    }

    /// The model with `hasX` beside every list `x`, at every depth: whether the list has items, for a table
    /// around them (Mustache's sections repeat per item and cannot tell that alone).
    static func flagged(_ model: [String: Any]) -> [String: Any] {
        var flagged = model
        for (key, value) in model {
            if let list = value as? [Any] {
                flagged["has" + key.prefix(1).uppercased() + key.dropFirst()] = !list.isEmpty
                flagged[key] = list.map { ($0 as? [String: Any]).map(Self.flagged) ?? $0 }
            } else if let object = value as? [String: Any] {
                flagged[key] = Self.flagged(object)
            }
        }
        return flagged
    }

    /// HTML with the console's security headers.
    static func html(_ html: String, status: HTTPResponse.Status, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "text/html; charset=utf-8"
        fields[.cacheControl] = "no-store"
        fields[.contentSecurityPolicy] =
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        fields[.xContentTypeOptions] = "nosniff"
        fields[.referrerPolicy] = "same-origin"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}

extension HTTPField.Name {
    /// `Referrer-Policy`.
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
}
