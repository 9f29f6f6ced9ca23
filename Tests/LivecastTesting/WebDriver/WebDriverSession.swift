import Foundation
import LivecastCore

/// A browser session of a WebDriver server: one window that loads pages, finds elements in them, runs scripts and takes
/// screenshots.
///
/// ``ChromeDriver/with(windowWidth:windowHeight:_:)`` makes one and ends it.
package struct WebDriverSession: Sendable {
    /// The server the session lives on.
    let connection: WebDriverConnection
    /// The session's id, given by the server.
    let id: String

    /// Loads `url`, and returns once the page has loaded.
    package func open(_ url: String) async throws {
        _ = try await self.send("POST", "/url", .object(["url": .string(url)]))
    }

    /// The URL of the page shown.
    package func currentURL() async throws -> String {
        try await self.string("GET", "/url")
    }

    /// The page's title.
    package func title() async throws -> String {
        try await self.string("GET", "/title")
    }

    /// The page's DOM, serialised as HTML.
    package func pageSource() async throws -> String {
        try await self.string("GET", "/source")
    }

    /// The first element of the page that matches `cssSelector`, waiting until there is one.
    /// - Parameters:
    ///   - cssSelector: A CSS selector.
    ///   - timeout: How long to wait. Defaults to 10 seconds.
    /// - Throws: ``TestFailure`` naming the selector and the page's URL when none appears in time.
    package func find(_ cssSelector: String, timeout: Duration = .seconds(10)) async throws -> WebElement {
        try await self.firstElement(cssSelector, under: "", timeout: timeout)
    }

    /// Every element of the page that matches `cssSelector` now, in document order; none if there is none (no waiting).
    package func findAll(_ cssSelector: String) async throws -> [WebElement] {
        try await self.elements(cssSelector, under: "")
    }

    /// Checks `condition` every 100 ms until it holds.
    /// - Parameters:
    ///   - timeout: How long to wait. Defaults to 10 seconds.
    ///   - description: What is awaited, for the failure message.
    ///   - condition: The check.
    /// - Throws: ``TestFailure`` with `description` when the condition does not hold in time.
    package func waitUntil(
        timeout: Duration = .seconds(10),
        _ description: String,
        _ condition: @escaping @Sendable () async throws -> Bool
    ) async throws {
        do {
            try await eventually(within: timeout, every: .milliseconds(100), description, condition)
        } catch let timedOut as WaitTimedOut {
            throw TestFailure(timedOut.description)
        }
    }

    /// Runs `script` in the page as the body of a function, and returns what it returns.
    /// - Parameters:
    ///   - script: JavaScript; `return` gives the result, and `arguments[0]`… are the `arguments`.
    ///   - arguments: Strings passed to the script. Defaults to none.
    /// - Returns: A returned string as it is, other values as JSON text (numbers, booleans, arrays, objects), `nil` for
    ///   `null` or `undefined`.
    package func executeScript(_ script: String, arguments: [String] = []) async throws -> String? {
        let body: JSONValue = .object(["script": .string(script), "args": .array(arguments.map(JSONValue.string))])
        let result = try await self.send("POST", "/execute/sync", body)
        switch result {
        case .null: return nil
        case .string(let text): return text
        default:
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            return String(decoding: try encoder.encode(result), as: UTF8.self)
        }
    }

    /// The messages the browser's console logged since the last call (chromedriver's log of type `browser`), each as
    /// `LEVEL message`: a resource that failed to load is `SEVERE http://… - Failed to load resource: …`.
    package func browserLog() async throws -> [String] {
        let answer = try await self.send("POST", "/se/log", .object(["type": .string("browser")]))
        guard case .array(let entries) = answer else { throw TestFailure("chromedriver answered no log: \(answer)") }
        return entries.map { entry in "\(entry["level"]?.stringValue ?? "?") \(entry["message"]?.stringValue ?? "")" }
    }

    /// Writes a PNG of the window's viewport to `path`, creating its parent directories.
    package func screenshot(to path: String) async throws {
        let encoded = try await self.string("GET", "/screenshot")
        guard let png = Data(base64Encoded: encoded) else { throw TestFailure("WebDriver screenshot: not base64") }
        let file = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try png.write(to: file)
    }

    /// The cookies the browser holds for the page shown.
    package func cookies() async throws -> [WebDriverCookie] {
        guard case .array(let cookies) = try await self.send("GET", "/cookie") else { throw TestFailure("WebDriver cookies: not an array") }
        return cookies.map(WebDriverCookie.init(json:))
    }

    /// Goes back one page in the window's history.
    package func back() async throws {
        _ = try await self.send("POST", "/back")
    }

    /// Resizes the window.
    package func setWindowSize(width: Int, height: Int) async throws {
        _ = try await self.send("POST", "/window/rect", .object(["width": .int(width), "height": .int(height)]))
    }

    /// Makes pages see `prefers-color-scheme: dark` (or `light`), through Chromium's DevTools protocol
    /// (chromedriver's `goog/cdp/execute`).
    package func emulateColorScheme(_ scheme: String) async throws {
        let feature = JSONValue.object(["name": .string("prefers-color-scheme"), "value": .string(scheme)])
        _ = try await self.send(
            "POST",
            "/goog/cdp/execute",
            .object(["cmd": .string("Emulation.setEmulatedMedia"), "params": .object(["features": .array([feature])])])
        )
    }

    /// Ends the session, closing its window.
    func end() async throws {
        _ = try await self.connection.send("DELETE", "/session/\(self.id)")
    }

    /// Sends a command of this session; `path` follows `/session/{id}`.
    func send(_ method: String, _ path: String, _ body: JSONValue = .object([:])) async throws -> JSONValue {
        try await self.connection.send(method, "/session/\(self.id)\(path)", body)
    }

    /// Sends a command of this session whose answer is a string; `path` follows `/session/{id}`.
    func string(_ method: String, _ path: String, _ body: JSONValue = .object([:])) async throws -> String {
        try await self.connection.string(method, "/session/\(self.id)\(path)", body)
    }

    /// The first element under `scope` (`""` for the page, `/element/{id}` for an element) that matches `cssSelector`,
    /// waiting until there is one.
    func firstElement(_ cssSelector: String, under scope: String, timeout: Duration) async throws -> WebElement {
        if let element = try await self.poll(timeout: timeout, { try await self.elements(cssSelector, under: scope).first }) {
            return element
        }
        throw TestFailure("no element matches \"\(cssSelector)\" after \(timeout) on \(try await self.currentURL())")
    }

    /// Every element under `scope` that matches `cssSelector` now.
    private func elements(_ cssSelector: String, under scope: String) async throws -> [WebElement] {
        let query: JSONValue = .object(["using": .string("css selector"), "value": .string(cssSelector)])
        guard case .array(let references) = try await self.send("POST", "\(scope)/elements", query) else {
            throw TestFailure("WebDriver find \"\(cssSelector)\": not an array")
        }
        return references.compactMap { $0[WebElement.referenceKey]?.stringValue }.map { WebElement(session: self, id: $0) }
    }

    /// Calls `attempt` every 100 ms until it gives a value. - Returns: the value, or `nil` when `timeout` passed first.
    private func poll<Value>(timeout: Duration, _ attempt: () async throws -> Value?) async throws -> Value? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let value = try await attempt() { return value }
            if ContinuousClock.now >= deadline { return nil }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}
