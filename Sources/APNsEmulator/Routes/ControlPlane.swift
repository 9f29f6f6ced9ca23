import Foundation
import NIOCore
import Synchronization

/// The emulator's own HTTP interface under `/emulator` on the push port, for tests, demos and backend developers:
/// the device fleet, faults, the device clock and connections. Not part of APNs; needs no provider token.
///
/// | Method and path | Body | Answer |
/// | --- | --- | --- |
/// | `GET /emulator/devices` | | `{"devices": [DeviceSnapshot]}` |
/// | `POST /emulator/devices` | `{"bundleId", "osVersion", "pushToStartTokens": {"Type": "hex" or ""}}` | `201` DeviceSnapshot |
/// | `GET /emulator/devices/{id}` | | DeviceSnapshot |
/// | `POST /emulator/devices/{id}/push-to-start-tokens/{type}/rotate` | | `{"token"}` |
/// | `POST /emulator/devices/{id}/activities/{activityId}/rotate-token` | | `{"token"}` |
/// | `POST /emulator/devices/{id}/activities/{activityId}/lose` | | the device: the activity is gone, its token still answers 200 |
/// | `GET`, `PUT /emulator/faults` | FaultPlan | FaultPlan |
/// | `GET /emulator/clock`, `POST /emulator/clock` | `{"advanceSeconds": n}` | `{"now": seconds}` |
/// | `GET /emulator/channels` | | `{"channels": [...]}` |
/// | `GET /emulator/connections` | | `{"connections": n, "answeredRequests": n}` |
/// | `POST /emulator/connections/goaway` | `{"reason"?}` | `{"connections": n}` |
/// | `POST /emulator/connections/drop` | | `{"connections": n}` |
/// | `POST /emulator/connections/streams` | `{"maxConcurrentStreams": n}` | `{"connections": n}`: SETTINGS sent to each |
/// | `GET /emulator/wire`, `GET /emulator/wire?after=N` | | `{"records": [WireRecord]}`, those with a sequence above N |
/// | `DELETE /emulator/wire` | | `{"cleared": n}` |
///
/// The wire log is kept only when ``APNsEmulator/Configuration/recordsWire`` is on (`livecast emulator --record-wire`);
/// otherwise `records` is always empty.
struct ControlPlane: Sendable {
    let state: EmulatorState
    let connections: ConnectionRegistry

    func respond(to request: EmulatorRequest, from connection: ObjectIdentifier) -> EmulatorResponse {
        let segments = request.pathSegments.dropFirst().map(String.init)
        switch (request.method, segments) {
        case ("GET", ["devices"]):
            return .json(["devices": self.state.devices()])
        case ("POST", ["devices"]):
            return self.addDevice(request)
        case ("GET", let path) where path.count == 2 && path[0] == "devices":
            guard let device = self.state.device(id: path[1]) else { return Self.error(404, "not_found", "no such device") }
            return .json(device)
        case ("POST", let path) where path.count == 5 && path[0] == "devices" && path[2] == "push-to-start-tokens" && path[4] == "rotate":
            let token = self.state.rotatePushToStartToken(deviceID: path[1], attributesType: path[3])
            return token.map { .json(["token": $0]) } ?? Self.error(404, "not_found", "no such device or attributes type")
        case ("POST", let path) where path.count == 5 && path[0] == "devices" && path[2] == "activities" && path[4] == "rotate-token":
            let token = self.state.rotateUpdateToken(deviceID: path[1], activityID: path[3])
            return token.map { .json(["token": $0]) } ?? Self.error(404, "not_found", "no such token-based activity")
        case ("POST", let path) where path.count == 5 && path[0] == "devices" && path[2] == "activities" && path[4] == "lose":
            guard self.state.loseActivity(deviceID: path[1], activityID: path[3]), let device = self.state.device(id: path[1]) else {
                return Self.error(404, "not_found", "no such activity")
            }
            return .json(device)
        case ("GET", ["faults"]):
            return .json(self.state.faults)
        case ("PUT", ["faults"]):
            return self.setFaults(request)
        case ("GET", ["clock"]):
            return .json(["now": self.state.deviceNow])
        case ("POST", ["clock"]):
            guard let body = Self.decode(ClockRequest.self, request), abs(body.advanceSeconds) <= 10 * 365 * 86400 else {
                return Self.error(400, "invalid_body", #"expected {"advanceSeconds": <integer>}"#)
            }
            return .json(["now": self.state.advanceClock(by: body.advanceSeconds)])
        case ("GET", ["channels"]):
            return .json(["channels": self.state.channels()])
        case ("GET", ["connections"]):
            return .json(["connections": self.connections.count, "answeredRequests": self.state.answeredRequests.load(ordering: .relaxed)])
        case ("POST", ["connections", "goaway"]):
            let reason = Self.decode(GoAwayRequest.self, request)?.reason ?? "Shutdown"
            return .json(["connections": self.connections.goAway(reason: reason, sparing: connection)])
        case ("POST", ["connections", "streams"]):
            guard let body = Self.decode(StreamLimitRequest.self, request), body.maxConcurrentStreams >= 1 else {
                return Self.error(400, "invalid_body", #"expected {"maxConcurrentStreams": <integer, 1 or more>}"#)
            }
            return .json(["connections": self.connections.limitStreams(to: body.maxConcurrentStreams)])
        case ("POST", ["connections", "drop"]):
            return .json(["connections": self.connections.drop(sparing: connection)])
        case ("GET", ["wire"]):
            return self.wireRecords(request)
        case ("DELETE", ["wire"]):
            return .json(["cleared": self.state.wire?.clear() ?? 0])
        default:
            return Self.error(404, "not_found", "no such control endpoint: \(request.method) \(request.path)")
        }
    }

    private func addDevice(_ request: EmulatorRequest) -> EmulatorResponse {
        guard let body = Self.decode(AddDeviceRequest.self, request), !body.bundleId.isEmpty else {
            return Self.error(400, "invalid_body", #"expected {"bundleId": "...", "osVersion": "18.0", "pushToStartTokens": {"Type": ""}}"#)
        }
        do {
            let device = try self.state.addDevice(
                bundleID: body.bundleId,
                osVersion: body.osVersion ?? "18.0",
                pushToStartTokens: body.pushToStartTokens ?? [:]
            )
            return .json(device, status: 201)
        } catch {
            return Self.error(400, "invalid_token", "push-to-start tokens must be unique hex strings")
        }
    }

    private func setFaults(_ request: EmulatorRequest) -> EmulatorResponse {
        guard let plan = Self.decode(FaultPlan.self, request) else {
            return Self.error(400, "invalid_body", "expected a fault plan: script, failureShare, failureAnswers, unregisteredTokens")
        }
        if let problem = plan.problem { return Self.error(400, "invalid_body", problem) }
        self.state.setFaults(plan)
        return .json(plan)
    }

    private func wireRecords(_ request: EmulatorRequest) -> EmulatorResponse {
        var after: Int?
        for item in (request.query ?? "").split(separator: "&") {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.first == "after" else { continue }
            guard parts.count == 2, let value = Int(parts[1]) else {
                return Self.error(400, "invalid_query", "after must be a sequence number")
            }
            after = value
        }
        return .json(["records": self.state.wire?.records(after: after) ?? []])
    }

    private static func decode<Body: Decodable>(_ type: Body.Type, _ request: EmulatorRequest) -> Body? {
        try? JSONDecoder().decode(type, from: Data(request.body.readableBytesView))
    }

    private static func error(_ status: Int, _ code: String, _ message: String) -> EmulatorResponse {
        .json(["error": ["code": code, "message": message]], status: status)
    }

    private struct AddDeviceRequest: Decodable {
        var bundleId: String
        var osVersion: String?
        var pushToStartTokens: [String: String]?
    }

    private struct ClockRequest: Decodable {
        var advanceSeconds: Int
    }

    private struct GoAwayRequest: Decodable {
        var reason: String?
    }

    private struct StreamLimitRequest: Decodable {
        var maxConcurrentStreams: Int
    }
}
