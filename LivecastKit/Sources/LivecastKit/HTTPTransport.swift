import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What came back from one try of a report.
enum TransportAnswer: Equatable {
    /// Livecast answered: its status, `Retry-After` (seconds) and, for an error, `error.code`, `error.message` and
    /// `error.field`.
    case answered(status: Int, retryAfter: Duration?, code: String?, message: String?, field: String? = nil)
    /// No answer: the network failed or the server could not be reached.
    case unreachable(message: String)
}

/// Sends reports to Livecast over `URLSession`, with the client key and the device id on every request.
struct HTTPTransport: Sendable {
    let baseURL: URL
    let bundleID: String
    let clientKey: String
    private let session: URLSession

    /// - Parameter protocolClasses: `URLProtocol` classes that answer before the network (the tests' stub).
    init(baseURL: URL, bundleID: String, clientKey: String, requestTimeout: Duration, protocolClasses: [AnyClass] = []) {
        self.baseURL = baseURL
        self.bundleID = bundleID
        self.clientKey = clientKey
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = Double(requestTimeout.components.seconds)
        configuration.httpAdditionalHeaders = ["User-Agent": "LivecastKit"]
        if !protocolClasses.isEmpty { configuration.protocolClasses = protocolClasses + (configuration.protocolClasses ?? []) }
        self.session = URLSession(configuration: configuration)
    }

    /// Sends one request and reads the answer. Never throws: every failure is an answer.
    func send(_ request: ReportRequest, deviceID: String) async -> TransportAnswer {
        let base = self.baseURL.absoluteString.hasSuffix("/") ? String(self.baseURL.absoluteString.dropLast()) : self.baseURL.absoluteString
        let bundle = self.bundleID.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? self.bundleID
        guard let url = URL(string: "\(base)/v1/apps/\(bundle)\(request.path)") else {
            return .answered(status: 400, retryAfter: nil, code: "bad_url", message: "not a URL: \(base)/v1/apps/\(bundle)\(request.path)")
        }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method
        urlRequest.setValue("Bearer \(self.clientKey)", forHTTPHeaderField: "Authorization")
        urlRequest.setValue(deviceID, forHTTPHeaderField: "Livecast-Device-ID")
        if let body = request.body {
            urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
            urlRequest.httpBody = body
        }
        do {
            let (data, response) = try await self.data(for: urlRequest)
            guard let http = response as? HTTPURLResponse else { return .unreachable(message: "not an HTTP answer") }
            let error = try? JSONDecoder().decode(ErrorBody.self, from: data)
            return .answered(
                status: http.statusCode,
                retryAfter: Self.retryAfter(http.value(forHTTPHeaderField: "Retry-After")),
                code: error?.error.code,
                message: error?.error.message,
                field: error?.error.field
            )
        } catch {
            return .unreachable(message: error.localizedDescription)
        }
    }

    #if canImport(FoundationNetworking)
    /// One request's answer. swift-corelibs-foundation's `URLSession` stops the process ("Trying to access a behaviour
    /// for a task that in not in the registry") when a task is cancelled as its answer arrives, which the async
    /// `data(for:)` does when the calling Swift task is cancelled (``LivecastClient/shutdown()``). So on Linux a request
    /// is never cancelled: it ends with its answer or its `requestTimeout`.
    private func data(for request: URLRequest) async throws -> (Data, URLResponse) {
        try await withCheckedThrowingContinuation { continuation in
            self.session.dataTask(with: request) { data, response, error in
                if let data, let response {
                    continuation.resume(returning: (data, response))
                } else {
                    continuation.resume(throwing: error ?? URLError(.badServerResponse))
                }
            }.resume()
        }
    }
    #else
    /// One request's answer; cancelled with the calling task.
    private func data(for request: URLRequest) async throws -> (Data, URLResponse) {
        try await self.session.data(for: request)
    }
    #endif

    /// `Retry-After` in seconds (Livecast sends seconds; an HTTP date is not used here).
    static func retryAfter(_ value: String?) -> Duration? {
        guard let value, let seconds = Int(value.trimmingCharacters(in: .whitespaces)), seconds >= 0 else { return nil }
        return .seconds(seconds)
    }

    /// `{"error": {"code": …, "message": …, "field": …}}`.
    private struct ErrorBody: Decodable {
        struct Detail: Decodable {
            let code: String?
            let message: String?
            let field: String?
        }
        let error: Detail
    }
}
