import Foundation
import LivecastCore

/// JSON over HTTP to a WebDriver server (chromedriver) on 127.0.0.1: one command per request, its answer's `value`
/// back.
///
/// The requests go through curl, not URLSession: FoundationNetworking in Swift 6.3 rejects a header with no space
/// after its colon, and chromedriver writes every header that way (`Content-Length:249`); the fix is
/// swift-corelibs-foundation pull request 5527.
struct WebDriverConnection: Sendable {
    /// The server's port on 127.0.0.1.
    let port: Int

    /// Sends one command.
    /// - Parameters:
    ///   - method: `GET`, `POST` or `DELETE`.
    ///   - path: The command's path, such as `/session/{id}/url`.
    ///   - body: The JSON body of a `POST`. Defaults to `{}`, which WebDriver wants for commands that take nothing.
    /// - Returns: The answer's `value`.
    /// - Throws: ``TestFailure`` naming the WebDriver error and its message when the server answers with one, or curl's
    ///   complaint when there is no answer.
    func send(_ method: String, _ path: String, _ body: JSONValue = .object([:])) async throws -> JSONValue {
        var arguments = ["-s", "-S", "--max-time", "60", "-X", method, "-w", "\n%{http_code}"]
        var input: String?
        if method == "POST" {
            arguments += ["-H", "Content-Type: application/json; charset=utf-8", "--data-binary", "@-"]
            input = String(decoding: try JSONEncoder().encode(body), as: UTF8.self)
        }
        arguments.append("http://127.0.0.1:\(self.port)\(path)")
        let result = try await ExternalProcess.run("curl", arguments, stdin: input)
        guard result.status == 0, let statusLine = result.stdout.lastIndex(of: "\n") else {
            throw TestFailure("WebDriver \(method) \(path): curl exited with status \(result.status): \(result.stderr)")
        }
        let text = result.stdout[..<statusLine]
        let status = Int(result.stdout[result.stdout.index(after: statusLine)...]) ?? 0
        let answer = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        guard status == 200 else {
            let error = answer?["value"]?["error"]?.stringValue ?? "HTTP status \(status)"
            let message = answer?["value"]?["message"]?.stringValue ?? String(text)
            throw TestFailure("WebDriver \(method) \(path): \(error): \(message)")
        }
        guard let value = answer?["value"] else { throw TestFailure("WebDriver \(method) \(path): no JSON value in \(text)") }
        return value
    }

    /// Sends one command whose answer is a string, and returns the string.
    func string(_ method: String, _ path: String, _ body: JSONValue = .object([:])) async throws -> String {
        let value = try await self.send(method, path, body)
        guard let text = value.stringValue else { throw TestFailure("WebDriver \(method) \(path): expected a string, got \(value)") }
        return text
    }
}
