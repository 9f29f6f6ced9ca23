import AsyncHTTPClient
import Foundation
import LivecastStore
import NIOCore
import NIOHTTP1

/// Speaks Apple's data-export API (PushKit, "Exporting delivery metrics logs" and "Exporting broadcast push
/// notification metrics"; docs/OPERATIONS.md): `POST …/v1/dataExports/apns/teams/{teamId}/appId/{appId}/datasetName/
/// {dataset}/request` with `X-Apple-CloudKit-Management-Token`, then `GET` the status URL it names until it is no
/// longer `PROCESSING`, then `GET` the CSV. Every failure is an ``AppleExportError`` that says what Apple answered.
struct AppleExportClient {
    let http: HTTPClient
    /// Apple's data-export host, `https://api.icloud.apple.com` (or the emulator's).
    let baseURL: String
    let credentials: AppleMetricsCredentials.Opened
    let requestTimeout: Duration
    /// The largest CSV read.
    let downloadLimit: Int

    /// The answer to a status poll.
    enum Status: Equatable {
        case processing
        case success(dataURL: String)
        /// `FAILED`, `EXPIRED`, or a status Apple's documentation does not name.
        case unsuccessful(String)
    }

    /// Asks for an export. - Returns: Its status URL.
    func request(_ dataset: AppleDataset, channelID: String?, from: String, through: String) async throws -> String {
        let path =
            "/v1/dataExports/apns/teams/\(Self.segment(self.credentials.teamID))/appId/\(Self.segment(self.credentials.appleAppID))/datasetName/\(dataset.rawValue)/request"
        var body: [String: JSONBodyValue] = [
            "startDate": .text(from), "endDate": .text(through), "dataDownloadUrlExpiresInMinutes": .number(60),
        ]
        if let channelID { body["channelId"] = .text(channelID) }
        let answer = try await self.send(.POST, self.baseURL + path, body: try JSONEncoder().encode(body), what: "the export request")
        struct Requested: Decodable { let statusUrl: String }
        guard let requested = try? JSONDecoder().decode(Requested.self, from: answer), !requested.statusUrl.isEmpty else {
            throw AppleExportError("Apple's answer to the export request names no statusUrl")
        }
        return self.absolute(requested.statusUrl)
    }

    /// Polls a status URL once.
    func status(_ url: String) async throws -> Status {
        let answer = try await self.send(.GET, url, body: nil, what: "the status poll")
        struct Details: Decodable {
            let dataUrl: String?
            // The documentation's prose spells it `dataURL`, its example and its download step `dataUrl`.
            let dataURL: String?
        }
        struct Polled: Decodable {
            let status: String
            let downloadDetails: Details?
        }
        guard let polled = try? JSONDecoder().decode(Polled.self, from: answer) else {
            throw AppleExportError("Apple's status answer is not the documented JSON")
        }
        switch polled.status {
        case "PROCESSING":
            return .processing
        case "SUCCESS":
            guard let url = polled.downloadDetails?.dataUrl ?? polled.downloadDetails?.dataURL, !url.isEmpty else {
                throw AppleExportError("Apple's export succeeded without a downloadDetails.dataUrl")
            }
            return .success(dataURL: self.absolute(url))
        default:
            return .unsuccessful(polled.status)
        }
    }

    /// Downloads the CSV (no token: the data URL carries its own grant).
    func download(_ url: String) async throws -> String {
        String(decoding: try await self.send(.GET, url, body: nil, what: "the download", token: false), as: UTF8.self)
    }

    private func send(_ method: HTTPMethod, _ url: String, body: Data?, what: String, token: Bool = true) async throws -> Data {
        var request = HTTPClientRequest(url: url)
        request.method = method
        if token { request.headers.add(name: "X-Apple-CloudKit-Management-Token", value: self.credentials.token) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response: HTTPClientResponse
        do {
            response = try await self.http.execute(request, timeout: .nanoseconds(Int64(self.requestTimeout.components.seconds) * 1_000_000_000))
        } catch {
            throw AppleExportError("\(what) did not reach Apple's data-export host: \(error)")
        }
        let bytes: ByteBuffer
        do {
            bytes = try await response.body.collect(upTo: self.downloadLimit)
        } catch {
            throw AppleExportError("\(what): Apple's answer was cut short or larger than \(self.downloadLimit) bytes")
        }
        guard response.status == .ok else {
            throw AppleExportError("\(what): Apple answered \(response.status.code): \(Self.meaning(response.status.code))")
        }
        return Data(bytes.readableBytesView)
    }

    /// What Apple's documentation says a status means.
    private static func meaning(_ status: UInt) -> String {
        switch status {
        case 400: "the request is badly formed"
        case 401: "the data export token is invalid (expired or revoked?): set a new one"
        case 404: "not found (an unknown channel; for a status poll, Apple may mean an invalid token)"
        case 500: "an internal error at Apple"
        default: "not a status Apple documents"
        }
    }

    /// A URL Apple gave, made absolute against the export host if it came relative.
    private func absolute(_ url: String) -> String {
        url.hasPrefix("https://") || url.hasPrefix("http://") ? url : self.baseURL + (url.hasPrefix("/") ? url : "/" + url)
    }

    /// A path segment, percent-encoded.
    private static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? text
    }
}

/// A JSON value of the export request's body.
private enum JSONBodyValue: Encodable {
    case text(String)
    case number(Int)

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .text(let text): try container.encode(text)
        case .number(let number): try container.encode(number)
        }
    }
}
