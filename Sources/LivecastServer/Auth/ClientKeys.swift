import HTTPTypes
import Hummingbird

/// What client keys are held to beyond their role: the device each request names, and the rate limits per device
/// and per client address that stand in for the per-key limit (one client key serves all of an app's devices).
final class ClientKeys: Sendable {
    /// The header naming the calling device: an ``InputLimits`` identifier the app generates once (a UUID).
    static let deviceHeader = HTTPField.Name("Livecast-Device-ID")!

    /// Requests per device, by app and device id.
    private let perDevice: RateLimiter<DeviceKey>
    /// Requests with client keys per client address.
    private let perAddress: RateLimiter<String>

    private struct DeviceKey: Hashable, Sendable {
        let appID: Int64
        let deviceID: String
    }

    init(limits: ClientLimits) {
        self.perDevice = RateLimiter(configuration: limits.perDevice)
        self.perAddress = RateLimiter(configuration: limits.perAddress)
    }

    /// Spends one request of a client address's budget (no address, as under the router test client: none).
    /// - Throws: `429 rate_limited` when it has none left.
    func limitRate(ofAddress address: String?) throws {
        guard let address else { return }
        if case .limited(let retryAfter) = self.perAddress.take(for: address) {
            throw APIError.rateLimited("this address is over its request rate for client keys", retryAfter: retryAfter)
        }
    }

    /// The device a client key's request names, once it spent one request of the device's budget.
    /// - Throws: ``APIError``: `400 device_id_required` without the header; those of ``checkedDevice(of:)``;
    ///   `429 rate_limited` when the device is over its rate.
    func device(of request: Request, appID: Int64) throws -> String {
        guard let deviceID = try Self.checkedDevice(of: request) else {
            throw APIError(.badRequest, code: "device_id_required", "a client key's request names its device in the Livecast-Device-ID header")
        }
        if case .limited(let retryAfter) = self.perDevice.take(for: DeviceKey(appID: appID, deviceID: deviceID)) {
            throw APIError.rateLimited("this device is over its request rate", retryAfter: retryAfter)
        }
        return deviceID
    }

    /// The device a request names, if it names one: any key may send the header, which only a client key needs.
    /// - Throws: ``APIError`` `422 invalid_device_id` unless it is one identifier of ``InputLimits`` (at most
    ///   128 bytes, no control character).
    static func checkedDevice(of request: Request) throws -> String? {
        let values = request.headers[values: Self.deviceHeader]
        guard let deviceID = values.first else { return nil }
        guard values.count == 1, !deviceID.isEmpty, (try? InputLimits.checkIdentifier(deviceID, field: Self.deviceHeader.rawName)) != nil else {
            throw APIError(
                .unprocessableContent,
                code: "invalid_device_id",
                "Livecast-Device-ID must be one identifier of 1 to \(InputLimits.identifierBytes) bytes with no control character",
                field: Self.deviceHeader.rawName
            )
        }
        return deviceID
    }

}
