import Foundation
import LivecastTesting
import Testing

/// The browser-test client drives headless Chromium: it types, clicks, reads text and takes screenshots.
@Suite struct WebDriverSmokeTests {
    @Test(.timeLimit(.minutes(2))) func textTypedAndShownByAClickIsReadBackAndTheScreenshotIsAPNG() async throws {
        let page = """
            <!doctype html><title>Smoke</title>
            <form onsubmit="return false">
            <label for=name>Name</label> <input id=name type=text>
            <button id=show type=button onclick="document.getElementById('out').textContent = document.getElementById('name').value">Show</button>
            </form>
            <p id=out></p>
            """
        let url = "data:text/html," + page.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let directory = try TemporaryDirectory()
        let screenshot = directory.path("screenshots/page.png")
        try await ChromeDriver.with { browser in
            try await browser.open(url)
            try await browser.find("#name").type("Hello, browser")
            try await browser.find("#show").click()
            #expect(try await browser.find("#out").text() == "Hello, browser")
            try await browser.screenshot(to: screenshot)
        }
        let png = try Data(contentsOf: URL(fileURLWithPath: screenshot))
        #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    }
}
