import CNGHTTP2
import NGHTTP2Bridge
import NIOCore

/// What an ``NGHTTP2ServerSession`` decoded, reported from inside ``NGHTTP2ServerSession/receive(_:)`` and
/// ``NGHTTP2ServerSession/collectOutput(allocator:)``, on the connection's event loop (a request's headers and body
/// bytes as an ``NGHTTP2Bridge/NGHTTP2MessageDelegate``). The delegate may submit
/// frames from these calls, but must not end the session or close the channel in them.
protocol NGHTTP2ServerSessionDelegate: NGHTTP2MessageDelegate {
    /// A request's header block begins on a new stream.
    func sessionBeganRequest(streamID: Int32)
    /// A header block is complete (before ``sessionReceivedEndOfStream(streamID:)`` when it ends the stream).
    func sessionReceivedHeaderBlock(streamID: Int32)
    /// A request ended (END_STREAM): it is complete.
    func sessionReceivedEndOfStream(streamID: Int32)
    /// A PING (not an acknowledgement) arrived; nghttp2 answers it.
    func sessionReceivedPing()
    /// A stream closed, answered or reset.
    func sessionClosedStream(streamID: Int32)
}

/// A server HTTP/2 session framed by libnghttp2: the C calls, and its callbacks turned into delegate calls
/// (``NGHTTP2Bridge/NGHTTP2Callbacks``). Bytes go in through ``receive(_:)``; frames come out through
/// ``collectOutput(allocator:)``. nghttp2 acknowledges SETTINGS and PINGs and returns flow-control credit itself.
/// Used on one event loop.
final class NGHTTP2ServerSession {
    /// A frame nghttp2 could not take or make; the connection cannot go on.
    struct SessionError: Error, CustomStringConvertible {
        let description: String

        init(_ code: Int) {
            self.description = String(cString: nghttp2_strerror(Int32(code)))
        }
    }

    /// The delegate owns the session and outlives it, so no reference count is kept (the callbacks are hot).
    unowned(unsafe) let delegate: any NGHTTP2ServerSessionDelegate
    private let session: OpaquePointer
    private let headers = ResponseHeaderBlock()
    /// Response bodies not yet handed to nghttp2, by stream.
    private var bodies: [Int32: ByteBuffer] = [:]
    /// What the callbacks find the session by.
    private var userData: NGHTTP2UserData?

    /// Starts a session; SETTINGS with `settings` go out with the first ``collectOutput(allocator:)``.
    init(delegate: any NGHTTP2ServerSessionDelegate, settings: [nghttp2_settings_entry]) {
        self.delegate = delegate
        let callbacks = NGHTTP2Callbacks.make()
        var session: OpaquePointer?
        nghttp2_session_server_new(&session, callbacks, nil)
        nghttp2_session_callbacks_del(callbacks)
        self.session = session!
        // No callback runs before the first receive or send, so the user data can follow the initialisation.
        let userData = NGHTTP2UserData(receiver: self, delegate: delegate)
        self.userData = userData
        nghttp2_session_set_user_data(self.session, userData.pointer)
        self.submitSettings(settings)
    }

    deinit {
        nghttp2_session_del(self.session)
    }

    /// Whether nghttp2 wants neither to read nor to write any more (after a GOAWAY either way, once its streams
    /// are done).
    var isDone: Bool {
        nghttp2_session_want_read(self.session) == 0 && nghttp2_session_want_write(self.session) == 0
    }

    /// Queues a SETTINGS frame.
    func submitSettings(_ settings: [nghttp2_settings_entry]) {
        var entries = settings
        nghttp2_submit_settings(self.session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &entries, entries.count)
    }

    /// Queues a response: `:status`, `headers`, and `body` unless it is empty.
    func submitResponse(streamID: Int32, status: Int, headers: [(String, String)], body: ByteBuffer) {
        _ = self.headers.withHeaders(status: status, headers: headers) { nameValues, count in
            guard body.readableBytes > 0 else {
                return nghttp2_submit_response(self.session, streamID, nameValues, count, nil)
            }
            self.bodies[streamID] = body
            var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: NGHTTP2Callbacks.readBody)
            let result = nghttp2_submit_response(self.session, streamID, nameValues, count, &provider)
            // A stream the client closed meanwhile (an answer that waited out the latency) takes no body.
            if result != 0 { self.bodies[streamID] = nil }
            return result
        }
    }

    /// Queues GOAWAY (NO_ERROR) naming `lastStreamID`, with `debugData` as its opaque data.
    func submitGoAway(lastStreamID: Int32, debugData: String) {
        var debugData = debugData
        debugData.withUTF8 { bytes in
            _ = nghttp2_submit_goaway(
                self.session,
                UInt8(NGHTTP2_FLAG_NONE.rawValue),
                lastStreamID,
                NGHTTP2_NO_ERROR.rawValue,
                bytes.baseAddress,
                bytes.count
            )
        }
    }

    /// Decodes bytes from the client, calling the delegate for what they hold.
    func receive(_ buffer: ByteBuffer) throws(SessionError) {
        let consumed = buffer.withUnsafeReadableBytes { bytes in
            nghttp2_session_mem_recv(self.session, bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count)
        }
        if consumed < 0 { throw SessionError(consumed) }
    }

    /// Serialises every frame nghttp2 has ready. - Returns: one buffer with all of them, or `nil` when none.
    func collectOutput(allocator: ByteBufferAllocator) throws(SessionError) -> ByteBuffer? {
        var output: ByteBuffer?
        while true {
            var data: UnsafePointer<UInt8>?
            let length = nghttp2_session_mem_send(self.session, &data)
            if length < 0 { throw SessionError(length) }
            guard length > 0, let data else { return output }
            if output == nil { output = allocator.buffer(capacity: max(length, 16 * 1024)) }
            output!.writeBytes(UnsafeRawBufferPointer(start: data, count: length))
        }
    }

    /// Changes `SETTINGS_MAX_CONCURRENT_STREAMS` in the SETTINGS frame that `output` starts with, as the client will
    /// read it; nghttp2 keeps the value it was given. Does nothing when `output` starts with another frame.
    static func showStreamLimit(_ limit: UInt32, inSettingsAtStartOf output: inout ByteBuffer) {
        let start = output.readerIndex
        guard let length = output.getInteger(at: start, as: UInt32.self).map({ Int($0 >> 8) }),
            output.getInteger(at: start + 3, as: UInt8.self) == UInt8(NGHTTP2_SETTINGS.rawValue)
        else { return }
        let entrySize = 6
        for entry in stride(from: start + 9, to: start + 9 + length, by: entrySize)
        where output.getInteger(at: entry, as: UInt16.self) == UInt16(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue) {
            output.setInteger(limit, at: entry + 2)
        }
    }

    /// Copies the next piece of a response body. - Returns: how many bytes, and whether the body is done.
    func nghttp2ReadBody(streamID: Int32, into buffer: UnsafeMutableBufferPointer<UInt8>) -> (count: Int, isDone: Bool) {
        guard var body = self.bodies.removeValue(forKey: streamID) else { return (0, true) }
        let count = min(buffer.count, body.readableBytes)
        body.withUnsafeReadableBytes { bytes in
            UnsafeMutableRawBufferPointer(buffer).copyBytes(from: bytes.prefix(count))
        }
        body.moveReaderIndex(forwardBy: count)
        guard body.readableBytes > 0 else { return (count, true) }
        self.bodies[streamID] = body
        return (count, false)
    }

    /// Forgets a closed stream's unsent body, and tells the delegate.
    func nghttp2ClosedStream(streamID: Int32, errorCode: UInt32) {
        self.bodies[streamID] = nil
        self.delegate.sessionClosedStream(streamID: streamID)
    }
}

/// The callbacks' other reports, handed to the delegate.
extension NGHTTP2ServerSession: NGHTTP2CallbackReceiver {
    func nghttp2BeganHeaders(streamID: Int32, isRequest: Bool) {
        if isRequest { self.delegate.sessionBeganRequest(streamID: streamID) }
    }

    func nghttp2ReceivedFrame(_ frame: NGHTTP2Frame) {
        switch frame {
        case .headers(let streamID, let endsStream):
            self.delegate.sessionReceivedHeaderBlock(streamID: streamID)
            if endsStream { self.delegate.sessionReceivedEndOfStream(streamID: streamID) }
        case .data(let streamID, endsStream: true):
            self.delegate.sessionReceivedEndOfStream(streamID: streamID)
        case .ping(isAcknowledgement: false):
            self.delegate.sessionReceivedPing()
        case .data, .ping, .settings, .goAway:
            break
        }
    }
}
