import Foundation
import HTTPTypes
import Hummingbird
import LivecastCore

extension Response {
    /// A JSON response, written by ``Foundation/JSONEncoder/sorted``.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) throws -> Response {
        .json(text: try JSONEncoder.sorted.encode(value), status: status, headers: headers)
    }

    /// A JSON response of JSON text already written.
    static func json(text: some Sequence<UInt8>, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: text)))
    }
}

extension HTTPField.Name {
    /// `Idempotency-Key`: a retried update with the same key gets the first answer.
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
    /// `Idempotent-Replayed: true` marks an answer given again for a retried request.
    static let idempotentReplayed = HTTPField.Name("Idempotent-Replayed")!
}
