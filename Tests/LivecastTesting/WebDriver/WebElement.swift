import Foundation
import LivecastCore

/// An element of the page a ``WebDriverSession`` shows, found by a CSS selector.
package struct WebElement: Sendable {
    /// The key under which WebDriver's JSON holds an element's id.
    static let referenceKey = "element-6066-11e4-a52e-4f735466cecf"

    /// The session whose page holds the element.
    let session: WebDriverSession
    /// The element's id, given by the server.
    let id: String

    /// Clicks the element's centre, scrolling it into view first.
    package func click() async throws {
        _ = try await self.session.send("POST", "/element/\(self.id)/click")
    }

    /// Types `text` into the element, as keystrokes after what it holds.
    package func type(_ text: String) async throws {
        _ = try await self.session.send("POST", "/element/\(self.id)/value", .object(["text": .string(text)]))
    }

    /// Empties an input or text area.
    package func clear() async throws {
        _ = try await self.session.send("POST", "/element/\(self.id)/clear")
    }

    /// The element's rendered text.
    package func text() async throws -> String {
        try await self.session.string("GET", "/element/\(self.id)/text")
    }

    /// The value of the attribute `name`, or `nil` when the element has none.
    package func attribute(_ name: String) async throws -> String? {
        let encodedName = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? name
        let value = try await self.session.send("GET", "/element/\(self.id)/attribute/\(encodedName)")
        return value == .null ? nil : value.stringValue ?? "\(value)"
    }

    /// Whether the element is visible on the page.
    package func isDisplayed() async throws -> Bool {
        try await self.session.send("GET", "/element/\(self.id)/displayed") == .bool(true)
    }

    /// The first element inside this one that matches `cssSelector`, waiting until there is one.
    /// - Parameters:
    ///   - cssSelector: A CSS selector.
    ///   - timeout: How long to wait. Defaults to 10 seconds.
    /// - Throws: ``TestFailure`` naming the selector and the page's URL when none appears in time.
    package func find(_ cssSelector: String, timeout: Duration = .seconds(10)) async throws -> WebElement {
        try await self.session.firstElement(cssSelector, under: "/element/\(self.id)", timeout: timeout)
    }
}
