import LivecastCore

/// A cookie the browser holds for the current page, as WebDriver reports it.
public struct WebDriverCookie: Sendable, Hashable {
    /// The cookie's name.
    public var name: String
    /// Its value.
    public var value: String
    /// Whether it is `HttpOnly`, hidden from the page's scripts.
    public var isHTTPOnly: Bool
    /// Whether it is `Secure`, sent over HTTPS only.
    public var isSecure: Bool
    /// Its `SameSite` policy (`Strict`, `Lax` or `None`), or `nil` when the browser reports none.
    public var sameSite: String?

    /// Reads one entry of WebDriver's Get All Cookies answer.
    init(json: JSONValue) {
        self.name = json["name"]?.stringValue ?? ""
        self.value = json["value"]?.stringValue ?? ""
        self.isHTTPOnly = json["httpOnly"] == .bool(true)
        self.isSecure = json["secure"] == .bool(true)
        self.sameSite = json["sameSite"]?.stringValue
    }
}
