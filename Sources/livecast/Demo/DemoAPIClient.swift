import Foundation
import LivecastCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The demo's client of Livecast's HTTP API, as an app's backend would use it: JSON bodies, a bearer key, and the
/// status and JSON of the answer.
struct DemoAPIClient: Sendable {
    /// An answer.
    struct Response: Sendable {
        let status: Int
        let json: JSONValue

        /// The `error.code` of an error answer.
        var errorCode: String? { self.json["error"]?["code"]?.stringValue }

        /// Whether the status is 2xx.
        var isSuccess: Bool { (200..<300).contains(self.status) }
    }

    /// `http://HOST:PORT`.
    let baseURL: String
    /// The app's routes are under `/v1/apps/{bundleID}`.
    let bundleID: String
    private let session: URLSession

    init(baseURL: String, bundleID: String) {
        self.baseURL = baseURL
        self.bundleID = bundleID
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 30
        self.session = URLSession(configuration: configuration)
    }

    /// Sends a request to a route of the app. - Parameter path: The path after `/v1/apps/{bundleID}`.
    /// - Throws: ``DemoFailure`` when the server does not answer or the answer is not JSON.
    func send(_ method: String, _ path: String, key: String, body: JSONValue? = nil) async throws -> Response {
        let url = "\(self.baseURL)/v1/apps/\(self.bundleID)\(path)"
        guard let target = URL(string: url) else { throw DemoFailure("not a URL: \(url)") }
        var request = URLRequest(url: target)
        request.httpMethod = method
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try Self.encoder.encode(body)
        }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await self.session.data(for: request)
        } catch {
            throw DemoFailure("\(method) \(url) failed: \(error.localizedDescription)")
        }
        guard let http = response as? HTTPURLResponse else { throw DemoFailure("\(method) \(url): not an HTTP answer") }
        guard !data.isEmpty else { return Response(status: http.statusCode, json: .null) }
        guard let json = try? JSONDecoder().decode(JSONValue.self, from: data) else {
            throw DemoFailure("\(method) \(url) answered \(http.statusCode) with \(String(decoding: data, as: UTF8.self))")
        }
        return Response(status: http.statusCode, json: json)
    }

    /// Sends a request that must succeed. - Throws: ``DemoFailure`` naming the step and the server's error otherwise.
    func expectSuccess(_ step: String, _ method: String, _ path: String, key: String, body: JSONValue? = nil) async throws -> Response {
        let response = try await self.send(method, path, key: key, body: body)
        guard response.isSuccess else {
            let message = response.json["error"]?["message"]?.stringValue ?? "\(response.json)"
            throw DemoFailure("\(step): \(method) \(path) answered \(response.status) \(response.errorCode ?? ""): \(message)")
        }
        return response
    }

    /// Sorted keys, so bodies read the same every run (they are printed in `--keep`'s examples).
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}
