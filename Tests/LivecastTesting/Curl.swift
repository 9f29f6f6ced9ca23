import Foundation
import LivecastCore

/// curl over HTTP/2, trusting one CA file: the independent client the emulator's tests speak through.
package struct Curl: Sendable {
    /// One request.
    package struct Request: Sendable {
        package var method: String
        package var url: String
        package var headers: [(String, String)]
        package var body: String?

        package init(_ method: String, _ url: String, headers: [(String, String)] = [], body: String? = nil) {
            self.method = method
            self.url = url
            self.headers = headers
            self.body = body
        }
    }

    /// One answer.
    package struct Response: Sendable {
        /// The `:status`, or 0 when the transfer failed (connection dropped, GOAWAY).
        package var status: Int
        /// Response headers, names lowercased.
        package var headers: [String: String]
        /// The body as text.
        package var body: String
        /// How many new connections curl opened for this transfer (0 when it reused one).
        package var newConnections: Int

        /// The body parsed as JSON, or `nil`.
        package var json: JSONValue? {
            try? JSONDecoder().decode(JSONValue.self, from: Data(self.body.utf8))
        }

        /// `reason` from an APNs error body.
        package var reason: String? {
            self.json?["reason"]?.stringValue
        }
    }

    /// The PEM file of the certificate to trust.
    package let caFile: String

    package init(caFile: String) {
        self.caFile = caFile
    }

    /// Sends one request on a new connection.
    package func send(_ request: Request) async throws -> Response {
        try await self.send([request])[0]
    }

    /// Sends requests one after the other on one curl invocation, so they share a connection while it lasts.
    /// - Parameters:
    ///   - requests: The requests, in order.
    ///   - pause: Seconds curl waits between transfers (curl's `--rate`). Defaults to none.
    package func send(_ requests: [Request], pause: Int? = nil) async throws -> [Response] {
        let directory = try TemporaryDirectory()
        var arguments: [String] = []
        for (index, request) in requests.enumerated() {
            if index > 0 { arguments.append("--next") }
            arguments += ["-s", "--http2", "--cacert", self.caFile, "-X", request.method]
            arguments += ["-D", directory.path("headers-\(index)"), "-o", directory.path("body-\(index)")]
            arguments += ["-w", "%{http_code} %{num_connects}\\n"]
            if let pause { arguments += ["--rate", "\(60 / max(pause, 1))/m"] }
            for (name, value) in request.headers {
                arguments += ["-H", "\(name): \(value)"]
            }
            if let body = request.body {
                let bodyPath = directory.path("request-\(index)")
                try body.write(toFile: bodyPath, atomically: false, encoding: .utf8)
                arguments += ["--data-binary", "@\(bodyPath)"]
            }
            arguments.append(request.url)
        }
        let result = try await ExternalProcess.run("curl", arguments)
        let lines = result.stdout.split(separator: "\n")
        return requests.indices.map { index in
            let fields = index < lines.count ? lines[index].split(separator: " ") : []
            let headerText = (try? String(contentsOfFile: directory.path("headers-\(index)"), encoding: .utf8)) ?? ""
            var headers: [String: String] = [:]
            for line in headerText.split(whereSeparator: \.isNewline) {
                guard let colon = line.firstIndex(of: ":"), !line.hasPrefix("HTTP/") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            return Response(
                status: fields.first.flatMap { Int($0) } ?? 0,
                headers: headers,
                body: (try? String(contentsOfFile: directory.path("body-\(index)"), encoding: .utf8)) ?? "",
                newConnections: fields.count > 1 ? Int(fields[1]) ?? 0 : 0
            )
        }
    }
}
