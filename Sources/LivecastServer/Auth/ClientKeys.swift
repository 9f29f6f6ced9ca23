import HTTPTypes
import Hummingbird
import LivecastStore
import Logging

/// What client keys are held to beyond their role: the device each request names, and the rate limits per device
/// and per client address that stand in for the per-key limit (one client key serves all of an app's devices).
///
/// Each limit is kept twice: in this process, which refuses at no cost what this instance alone sees too much of,
/// and in PostgreSQL for every instance together (``ClientGate``), which each request that got past the first passes
/// once, with its device's admission when it registers (``pass(_:address:admission:logger:)``).
final class ClientKeys: Sendable {
    /// The header naming the calling device: an ``InputLimits`` identifier the app generates once (a UUID).
    static let deviceHeader = HTTPField.Name("Livecast-Device-ID")!

    /// Requests per device, by app and device id.
    private let perDevice: RateLimiter<DeviceKey>
    /// Requests with client keys per client address.
    private let perAddress: RateLimiter<String>

    /// The limits every instance shares.
    private let gate: ClientGate
    let limits: ClientLimits

    private struct DeviceKey: Hashable, Sendable {
        let appID: Int64
        let deviceID: String
    }

    init(limits: ClientLimits, gate: ClientGate) {
        self.perDevice = RateLimiter(configuration: limits.perDevice)
        self.perAddress = RateLimiter(configuration: limits.perAddress)
        self.gate = gate
        self.limits = limits
    }

    /// Passes a client key's request through the limits every instance shares: a request of its device's and its
    /// address's budgets and, for a registration, the device's admission (the app's ceiling of new devices an hour,
    /// and the address's share of it, unless `admission` says its backend vouched for it). Other keys pass at once.
    /// - Throws: `429 rate_limited` with `Retry-After`, saying which limit.
    func pass(_ scope: AppScope, address: String?, admission: ClientGate.Admission? = nil, logger: Logger) async throws {
        guard let deviceID = scope.clientDeviceID else { return }
        let request = ClientGate.Request(
            appID: scope.appID,
            deviceID: deviceID,
            address: address,
            perDevice: self.limits.perDevice.bucket,
            perAddress: self.limits.perAddress.bucket,
            admission: admission
        )
        guard let (refusal, wait) = try await self.gate.logging(to: logger).pass(request) else { return }
        let message =
            switch refusal {
            case .deviceRate: "this device is over its request rate"
            case .addressRate: "this address is over its request rate for client keys"
            case .appCeiling: "this app's client keys registered \(self.limits.newDevicesPerHour) new devices in the last hour, the most they may"
            case .addressShare:
                "this address brought \(self.limits.newDevicesPerAddress) new devices in the last hour, its share of the app's; "
                    + "a registration with a userAssertion is not held to it"
            }
        throw APIError.rateLimited(message, retryAfter: Int(wait.components.seconds) + 1)
    }

    /// The admission of a registration's device, as the settings bound it.
    func admission(isVouched: Bool) -> ClientGate.Admission {
        ClientGate.Admission(isVouched: isVouched, ceiling: self.limits.newDevicesPerHour, addressShare: self.limits.newDevicesPerAddress)
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
