import Foundation

@testable import LivecastKit

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Livecast's client routes as a stub that answers in the process: a `URLProtocol` registered in the client's
/// session answers every request to `http://<host>`, where each stub has a host of its own (tests run side by side).
/// By default it answers as Livecast does (`201` for a new registration, `200 unchanged` for the same one again,
/// `204` for removals); `answer` may say otherwise for a request.
final class StubLivecast: @unchecked Sendable {
    // @unchecked: `seen` and `handler` are read and written under `lock`.

    /// A request as the stub saw it.
    struct Request: Sendable {
        let method: String
        /// After `/v1/apps/{bundleId}`.
        let path: String
        /// By lowercased name.
        let headers: [String: String]
        let body: Data?

        /// The body's JSON object (empty without one).
        var json: [String: Any] {
            guard let body, let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { return [:] }
            return object
        }

        /// A string field of the body.
        func string(_ key: String) -> String? { self.json[key] as? String }

        /// A boolean field of the body.
        func bool(_ key: String) -> Bool? { self.json[key] as? Bool }

        /// `PUT /push-to-start-tokens/…`, say.
        var route: String { "\(self.method) \(self.path)" }
    }

    /// An answer.
    struct Answer: Sendable {
        var status: Int
        var headers: [String: String] = [:]
        var body: String = ""

        /// Livecast's error body.
        static func error(
            _ status: Int,
            _ code: String,
            _ message: String = "refused",
            field: String? = nil,
            headers: [String: String] = [:]
        ) -> Answer {
            let field = field.map { #","field":"\#($0)""# } ?? ""
            return Answer(status: status, headers: headers, body: #"{"error":{"code":"\#(code)","message":"\#(message)"\#(field)}}"#)
        }
    }

    let host = "stub-\(UUID().uuidString.lowercased()).test"
    private let lock = NSLock()
    private var seen: [Request] = []
    private var handler: @Sendable (Request, Int) -> Answer?
    /// What Livecast has of each registration path: the last body, for `unchanged`.
    private var registered: [String: Data] = [:]

    /// - Parameter answer: The answer to a request (with how many requests came before it), `nil` for the default.
    init(answer: @escaping @Sendable (Request, Int) -> Answer? = { _, _ in nil }) {
        self.handler = answer
        Self.registry.withLock { $0[self.host] = self }
    }

    deinit {
        let host = self.host
        Self.registry.withLock { $0[host] = nil }
    }

    var baseURL: URL { URL(string: "http://\(self.host)")! }

    /// Every request so far, in order.
    var requests: [Request] { self.lock.withLock { self.seen } }

    /// Changes how the stub answers from now on.
    func answer(_ handler: @escaping @Sendable (Request, Int) -> Answer?) {
        self.lock.withLock { self.handler = handler }
    }

    /// A client configuration that talks to this stub, retrying fast.
    func configuration(storeDirectory: URL, now: @escaping @Sendable () -> Date = Date.init) -> LivecastClient.Configuration {
        var configuration = LivecastClient.Configuration(
            baseURL: self.baseURL,
            bundleID: "com.example.game",
            clientKey: "lc_test_key",
            storeDirectory: storeDirectory
        )
        configuration.osVersion = "18.2"
        configuration.retryPolicy = RetryPolicy(initialDelay: .milliseconds(10), maximumDelay: .milliseconds(40))
        configuration.urlProtocols = URLProtocolClasses([StubURLProtocol.self])
        configuration.now = now
        return configuration
    }

    fileprivate func respond(to request: Request) -> Answer {
        self.lock.withLock {
            let index = self.seen.count
            self.seen.append(request)
            if let answer = self.handler(request, index) { return answer }
            switch request.method {
            case "PUT":
                let body = request.body ?? Data()
                defer { self.registered[request.path] = body }
                switch self.registered[request.path] {
                case nil: return Answer(status: 201, body: #"{"result":"created"}"#)
                case body: return Answer(status: 200, body: #"{"result":"unchanged"}"#)
                default: return Answer(status: 200, body: #"{"result":"rotated"}"#)
                }
            case "DELETE", "POST":
                return Answer(status: 204)
            default:
                return Answer.error(405, "method_not_allowed")
            }
        }
    }

    fileprivate static let registry = Locked<[String: StubLivecast]>([:])
}

/// Answers the requests to a ``StubLivecast``'s host.
final class StubURLProtocol: URLProtocol {
    override class func canInit(with request: URLRequest) -> Bool {
        guard let host = request.url?.host else { return false }
        return StubLivecast.registry.withLock { $0[host] } != nil
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        guard let url = self.request.url, let host = url.host, let stub = StubLivecast.registry.withLock({ $0[host] }) else {
            self.client?.urlProtocol(self, didFailWithError: URLError(.cannotConnectToHost))
            return
        }
        let prefix = "/v1/apps/com.example.game"
        let path = url.path.hasPrefix(prefix) ? String(url.path.dropFirst(prefix.count)) : url.path
        var headers: [String: String] = [:]
        for (name, value) in self.request.allHTTPHeaderFields ?? [:] { headers[name.lowercased()] = value }
        let request = StubLivecast.Request(
            method: self.request.httpMethod ?? "GET",
            path: Self.rawPath(of: url) ?? path,
            headers: headers,
            body: self.request.httpBody ?? Self.read(self.request.httpBodyStream)
        )
        let answer = stub.respond(to: request)
        var fields = answer.headers
        if !answer.body.isEmpty { fields["Content-Type"] = "application/json" }
        let response = HTTPURLResponse(url: url, statusCode: answer.status, httpVersion: "HTTP/1.1", headerFields: fields)!
        self.client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        self.client?.urlProtocol(self, didLoad: Data(answer.body.utf8))
        self.client?.urlProtocolDidFinishLoading(self)
    }

    override func stopLoading() {}

    /// The path after `/v1/apps/{bundleId}`, still percent-encoded.
    private static func rawPath(of url: URL) -> String? {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        let prefix = "/v1/apps/com.example.game"
        let path = components.percentEncodedPath
        return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : path
    }

    private static func read(_ stream: InputStream?) -> Data? {
        guard let stream else { return nil }
        stream.open()
        defer { stream.close() }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while stream.hasBytesAvailable {
            let count = stream.read(&buffer, maxLength: buffer.count)
            guard count > 0 else { break }
            data.append(buffer, count: count)
        }
        return data
    }
}
