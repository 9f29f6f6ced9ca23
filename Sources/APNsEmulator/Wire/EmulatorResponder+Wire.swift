import LivecastCore
import NIOCore

extension EmulatorResponder {
    /// Answers with `answer`, recording the request and its answer in the wire log when it is on and the request is
    /// a device push or a broadcast (`POST`). Every answer is recorded, faults and refusals included; GOAWAY and a
    /// dropped connection leave the status empty.
    /// - Parameters:
    ///   - request: The complete request.
    ///   - endpoint: The APNs endpoint it is for.
    ///   - answer: Answers the request.
    func recordingWire(_ request: EmulatorRequest, _ endpoint: Endpoint, answer: () -> EmulatorResponse) -> EmulatorResponse {
        guard let wire = self.state.wire, request.method == "POST", let target = Self.wireTarget(endpoint, request) else {
            return answer()
        }
        let sequence = wire.arrive(target: target, body: WireBody(Array(request.body.readableBytesView)))
        var response = answer()
        if response.isAnswered {
            wire.answer(
                sequence,
                status: response.status,
                reason: response.status == 200 ? nil : response.apnsReason,
                deviceDropped: response.deviceDropped?.rawValue
            )
            response.wireSequence = sequence
        }
        return response
    }

    /// Takes back a recorded answer that never left: its connection closed while it waited out the latency, so the
    /// client saw no answer (and may send the request again), as after a dropped connection.
    func answerLost(_ response: EmulatorResponse) {
        guard let wire = self.state.wire, let sequence = response.wireSequence else { return }
        wire.answer(sequence, status: nil, reason: nil, deviceDropped: response.deviceDropped?.rawValue)
    }

    /// `device:<lowercase token>` for a device push, `channel:<apns-channel-id>` for a broadcast, `nil` otherwise.
    static func wireTarget(_ endpoint: Endpoint, _ request: EmulatorRequest) -> String? {
        switch endpoint {
        case .devicePush(let token):
            "device:" + (DeviceToken.normalized(token) ?? token.lowercased())
        case .broadcast:
            "channel:" + (request.first("apns-channel-id") ?? "")
        case .channel, .allChannels:
            nil
        }
    }
}
