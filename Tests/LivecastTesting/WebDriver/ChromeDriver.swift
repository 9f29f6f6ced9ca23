import LivecastCore

#if canImport(Glibc)
import Glibc
import LocalPostgres
#endif

/// Debian's headless Chromium, driven through chromedriver (packages `chromium` and `chromium-driver`), for browser
/// tests.
///
/// ```swift
/// try await ChromeDriver.with { browser in
///     try await browser.open("http://127.0.0.1:\(port)/console")
///     try await browser.find("#sign-in").click()
/// }
/// ```
package enum ChromeDriver {
    /// Where Debian's `chromium-driver` installs chromedriver.
    static let chromedriverPath = "/usr/bin/chromedriver"
    /// Where Debian's `chromium` installs the browser.
    static let chromiumPath = "/usr/bin/chromium"

    /// Starts chromedriver on a free port and a headless Chromium session in it, runs `body` with the session, then
    /// ends the session and stops chromedriver, also when `body` throws.
    /// - Parameters:
    ///   - windowWidth: The window's width in pixels. Defaults to 1280.
    ///   - windowHeight: The window's height in pixels. Defaults to 900.
    ///   - body: What to do in the browser.
    /// - Throws: ``TestFailure`` with chromedriver's output when it does not get ready within 30 seconds, WebDriver
    ///   errors as ``TestFailure``, and whatever `body` throws.
    package static func with(windowWidth: Int = 1280, windowHeight: Int = 900, _ body: (WebDriverSession) async throws -> Void) async throws {
        let port = try FreePort.next()
        let chromedriver = try await BackgroundProcess(Self.chromedriverPath, ["--port=\(port)"])
        do {
            let connection = WebDriverConnection(port: port)
            try await Self.waitUntilReady(connection, chromedriver)
            let session = try await Self.startSession(connection, windowWidth: windowWidth, windowHeight: windowHeight)
            do {
                try await body(session)
            } catch {
                try? await session.end()
                throw error
            }
            try await session.end()
        } catch {
            await Self.stop(chromedriver)
            throw error
        }
        await Self.stop(chromedriver)
    }

    /// Asks chromedriver's status until it says it is ready for sessions.
    private static func waitUntilReady(_ connection: WebDriverConnection, _ chromedriver: BackgroundProcess) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        var lastAnswer = "none"
        while ContinuousClock.now < deadline {
            do {
                let answer = try await connection.send("GET", "/status")
                if answer["ready"] == .bool(true) { return }
                lastAnswer = "\(answer)"
            } catch {
                lastAnswer = "\(error)"
            }
            if let status = try await chromedriver.waitForExit(timeout: .milliseconds(100)) {
                throw TestFailure("chromedriver exited with status \(status) before it got ready; its stderr:\n\(chromedriver.stderr)")
            }
        }
        throw TestFailure(
            "chromedriver did not get ready on port \(connection.port) within 30 seconds (last status: \(lastAnswer)); its stderr:\n\(chromedriver.stderr)"
                + "\nits stdout:\n\(chromedriver.stdout)"
        )
    }

    /// Opens a session of headless Chromium with a window of the given size.
    private static func startSession(_ connection: WebDriverConnection, windowWidth: Int, windowHeight: Int) async throws -> WebDriverSession {
        let arguments = [
            "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=\(windowWidth),\(windowHeight)",
        ]
        let chromeOptions: JSONValue = .object(["binary": .string(Self.chromiumPath), "args": .array(arguments.map(JSONValue.string))])
        let capabilities: JSONValue = .object([
            "browserName": .string("chrome"), "goog:chromeOptions": chromeOptions,
            // Keeps the console's messages, failed loads included, for WebDriverSession.browserLog().
            "goog:loggingPrefs": .object(["browser": .string("ALL")]),
        ])
        let answer = try await connection.send("POST", "/session", .object(["capabilities": .object(["alwaysMatch": capabilities])]))
        guard let id = answer["sessionId"]?.stringValue else { throw TestFailure("chromedriver opened no session: \(answer)") }
        return WebDriverSession(connection: connection, id: id)
    }

    /// Stops chromedriver: SIGTERM, then SIGKILL if it still runs after 5 seconds.
    private static func stop(_ chromedriver: BackgroundProcess) async {
        chromedriver.signal(SIGTERM)
        if (try? await chromedriver.waitForExit(timeout: .seconds(5))) == nil { chromedriver.signal(SIGKILL) }
    }
}
