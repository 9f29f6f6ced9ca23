import Foundation
import NIOCore
import Synchronization

/// Turns a request into a response: routing, provider-token checks, fault injection, then the endpoint.
struct EmulatorResponder: Sendable {
    /// Which listener a request arrived on.
    enum Listener: Sendable {
        /// Device pushes, broadcasts and the `/emulator` control plane.
        case push
        /// Channel management.
        case management
    }

    /// The APNs endpoints.
    enum Endpoint {
        case devicePush(token: String)
        case broadcast(bundleID: String)
        case channel(bundleID: String)
        case allChannels(bundleID: String)

        /// The only methods APNs allows on the endpoint.
        var allowedMethods: [String] {
            switch self {
            case .devicePush, .broadcast: ["POST"]
            case .channel: ["POST", "GET", "DELETE"]
            case .allChannels: ["GET"]
            }
        }

        /// The header that carries the request id: `apns-id` for device pushes, `apns-request-id` elsewhere.
        var requestIDHeader: String {
            if case .devicePush = self { return "apns-id" }
            return "apns-request-id"
        }
    }

    let state: EmulatorState
    let control: ControlPlane
    let listener: Listener

    /// Answers one request.
    /// - Parameters:
    ///   - request: The complete request.
    ///   - authentication: The connection's provider-token history.
    ///   - connection: The connection's identity, so the control plane can spare it.
    func respond(
        to request: EmulatorRequest,
        authentication: inout ConnectionAuthentication,
        connection: ObjectIdentifier
    ) -> EmulatorResponse {
        if self.listener == .push, request.pathSegments.first == "emulator" {
            return self.control.respond(to: request, from: connection)
        }
        if self.listener == .push, request.pathSegments.first == "v1", request.pathSegments.dropFirst().first == "dataExports" {
            return self.dataExport(request)
        }
        guard let endpoint = self.endpoint(for: request) else {
            let requestIDName = self.listener == .push ? "apns-id" : "apns-request-id"
            return .apnsError(APNsFailure(404, "BadPath"), headers: [(requestIDName, UUIDText.random())])
        }
        return self.recordingWire(request, endpoint) {
            self.answer(request, endpoint: endpoint, authentication: &authentication)
        }
    }

    /// Answers a request to an APNs endpoint: request id, method, provider token, then a fault or the endpoint.
    private func answer(
        _ request: EmulatorRequest,
        endpoint: Endpoint,
        authentication: inout ConnectionAuthentication
    ) -> EmulatorResponse {
        let requestIDName = endpoint.requestIDHeader
        let requestID: String
        switch request.single(requestIDName) {
        case .absent:
            requestID = UUIDText.random()
        case .present(let value) where Self.isCanonicalUUID(value):
            requestID = value
        case .present, .repeated:
            return .apnsError(APNsFailure(400, "BadMessageId"), headers: [(requestIDName, UUIDText.random())])
        }
        let idHeaders = [(requestIDName, requestID)]
        guard endpoint.allowedMethods.contains(request.method) else {
            return .apnsError(APNsFailure(405, "MethodNotAllowed"), headers: idHeaders)
        }
        let isFirstAuthentication: Bool
        do {
            isFirstAuthentication = try authentication.authenticate(
                authorization: request.first("authorization"),
                trustedKeys: self.state.trustedKeys,
                environment: self.state.configuration.environment,
                now: EmulatorState.wallClock
            )
        } catch {
            return .apnsError(error, headers: idHeaders)
        }
        var response = self.faultOrAnswer(endpoint, request, requestID: requestID)
        self.state.answeredRequests.add(1, ordering: .relaxed)
        if isFirstAuthentication, response.connectionAction == nil {
            response.connectionAction = .raiseStreamLimit
        }
        return response
    }

    private func faultOrAnswer(_ endpoint: Endpoint, _ request: EmulatorRequest, requestID: String) -> EmulatorResponse {
        let idHeaders = [(endpoint.requestIDHeader, requestID)]
        switch self.state.withLock({ $0.faults.nextFault() }) {
        case .status(let status, let reason):
            return .apnsError(APNsFailure(status, reason), headers: idHeaders)
        case .goAway(let reason):
            return EmulatorResponse(status: 0, connectionAction: .goAway(reason: reason))
        case .drop:
            return EmulatorResponse(status: 0, connectionAction: .drop)
        case .pass, .none:
            break
        }
        let result: Result<EmulatorResponse, APNsFailure>
        switch endpoint {
        case .devicePush(let token): result = self.devicePush(request, token: token, apnsID: requestID)
        case .broadcast(let bundleID): result = self.broadcast(request, bundleID: bundleID, requestID: requestID)
        case .channel(let bundleID): result = self.channel(request, bundleID: bundleID)
        case .allChannels(let bundleID): result = self.allChannels(bundleID: bundleID)
        }
        switch result {
        case .success(var response):
            response.headers = idHeaders + response.headers
            return response
        case .failure(let failure):
            return .apnsError(failure, headers: idHeaders)
        }
    }

    private func endpoint(for request: EmulatorRequest) -> Endpoint? {
        let segments = request.pathSegments
        switch (self.listener, segments.count) {
        case (.push, 2) where segments == ["3", "device"]:
            return .devicePush(token: "")
        case (.push, 3) where segments[0] == "3" && segments[1] == "device":
            return .devicePush(token: String(segments[2]))
        case (.push, 4) where segments[0] == "4" && segments[1] == "broadcasts" && segments[2] == "apps":
            return .broadcast(bundleID: String(segments[3]))
        case (.management, 4) where segments[0] == "1" && segments[1] == "apps" && segments[3] == "channels":
            return .channel(bundleID: String(segments[2]))
        case (.management, 4) where segments[0] == "1" && segments[1] == "apps" && segments[3] == "all-channels":
            return .allChannels(bundleID: String(segments[2]))
        default:
            return nil
        }
    }

    /// Whether a value is a canonical lowercase-or-uppercase 8-4-4-4-12 UUID.
    static func isCanonicalUUID(_ value: String) -> Bool {
        value.count == 36 && UUID(uuidString: value) != nil
    }

    /// Reads a header that must be unique; `DuplicateHeaders` when it is repeated.
    static func uniqueHeader(_ request: EmulatorRequest, _ name: String) throws(APNsFailure) -> String? {
        switch request.single(name) {
        case .absent: return nil
        case .present(let value): return value
        case .repeated: throw APNsFailure(400, "DuplicateHeaders")
        }
    }

    /// Checks `apns-priority`: absent means 10; otherwise 1, 5 or 10.
    static func priority(_ request: EmulatorRequest) throws(APNsFailure) -> Int? {
        guard let text = try Self.uniqueHeader(request, "apns-priority") else { return nil }
        guard let priority = Int(text), [1, 5, 10].contains(priority) else { throw APNsFailure(400, "BadPriority") }
        return priority
    }

    /// Checks `apns-expiration`: UNIX seconds, `0` for "try once".
    static func expiration(_ request: EmulatorRequest) throws(APNsFailure) -> Int? {
        guard let text = try Self.uniqueHeader(request, "apns-expiration") else { return nil }
        guard let expiration = Int(text), expiration >= 0 else { throw APNsFailure(400, "BadExpirationDate") }
        return expiration
    }

    /// Checks the body: `PayloadEmpty` when empty, `413 PayloadTooLarge` above the limit.
    static func checkPayload(_ request: EmulatorRequest, limit: Int) throws(APNsFailure) {
        guard request.body.readableBytes > 0 else { throw APNsFailure(400, "PayloadEmpty") }
        guard request.body.readableBytes <= limit else { throw APNsFailure(413, "PayloadTooLarge") }
    }

    /// The body's bytes, once ``checkPayload(_:limit:)`` accepts them.
    static func payload(_ request: EmulatorRequest, limit: Int) throws(APNsFailure) -> [UInt8] {
        try Self.checkPayload(request, limit: limit)
        return Array(request.body.readableBytesView)
    }
}
