import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// Someone using the console without a browser: the test client with a cookie jar, and the CSRF token of the last
/// page that had one.
struct ConsoleUser {
    let client: any TestClientProtocol
    /// Cookies by name, as the server last set them.
    private(set) var cookies: [String: String] = [:]
    /// Every `Set-Cookie` the server sent, in full.
    private(set) var setCookies: [String] = []
    /// The `csrf` field of the last page that had a form.
    private(set) var csrf: String?

    init(client: any TestClientProtocol) {
        self.client = client
    }

    /// Signs in with `key` through the sign-in form. - Returns: The sign-in's answer.
    @discardableResult
    mutating func signIn(key: String, headers: HTTPFields = [:]) async throws -> TestResponse {
        _ = try await self.get("/console/login", headers: headers)
        return try await self.post("/console/login", form: ["key": key, "next": "/console"], headers: headers)
    }

    mutating func get(_ path: String, headers: HTTPFields = [:]) async throws -> TestResponse {
        try await self.send(.get, path, body: nil, headers: headers)
    }

    /// Posts a form, with the last page's CSRF token unless `token` is `false`.
    mutating func post(_ path: String, form: [String: String] = [:], token: Bool = true, headers: HTTPFields = [:]) async throws -> TestResponse {
        var fields = form
        if token, let csrf = self.csrf { fields["csrf"] = csrf }
        let body = fields.map { "\(Self.encode($0.key))=\(Self.encode($0.value))" }.joined(separator: "&")
        var headers = headers
        headers[.contentType] = "application/x-www-form-urlencoded"
        return try await self.send(.post, path, body: body, headers: headers)
    }

    private mutating func send(_ method: HTTPRequest.Method, _ path: String, body: String?, headers: HTTPFields) async throws -> TestResponse {
        var headers = headers
        if !self.cookies.isEmpty {
            headers[.cookie] = self.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
        }
        let response = try await self.client.execute(uri: path, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
        for setCookie in response.headers[values: .setCookie] {
            self.setCookies.append(setCookie)
            let pair = setCookie.split(separator: ";")[0].split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let value = pair.count > 1 ? String(pair[1]) : ""
            self.cookies[String(pair[0])] = value.isEmpty || setCookie.contains("Max-Age=0") ? nil : value
        }
        if let token = Self.csrfToken(in: response.text) { self.csrf = token }
        return response
    }

    /// The `csrf` field's value in a page.
    static func csrfToken(in html: String) -> String? {
        guard let range = html.range(of: #"name="csrf" value="([0-9a-f]{64})""#, options: .regularExpression) else { return nil }
        return String(html[range].dropFirst(#"name="csrf" value=""#.count).dropLast())
    }

    private static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }
}
