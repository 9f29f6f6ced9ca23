import LivecastCore

/// A cookie the browser holds for the current page, as WebDriver reports it.
package struct WebDriverCookie: Sendable, Hashable {
    /// The cookie's name.
    package var name: String
    /// Its value.
    package var value: String
    /// Whether it is `HttpOnly`, hidden from the page's scripts.
    package var isHTTPOnly: Bool
    /// Whether it is `Secure`, sent over HTTPS only.
    package var isSecure: Bool
    /// Its `SameSite` policy (`Strict`, `Lax` or `None`), or `nil` when the browser reports none.
    package var sameSite: String?

    /// Reads one entry of WebDriver's Get All Cookies answer.
    init(json: JSONValue) {
        self.name = json["name"]?.stringValue ?? ""
        self.value = json["value"]?.stringValue ?? ""
        self.isHTTPOnly = json["httpOnly"] == .bool(true)
        self.isSecure = json["secure"] == .bool(true)
        self.sameSite = json["sameSite"]?.stringValue
    }
}
