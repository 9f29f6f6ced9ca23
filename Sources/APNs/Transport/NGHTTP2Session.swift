import CNGHTTP2
import NGHTTP2Bridge
import NIOCore

/// What an ``NGHTTP2Session`` decoded, reported from inside ``NGHTTP2Session/receive(_:)`` and
/// ``NGHTTP2Session/collectOutput(allocator:)``, on the connection's event loop (a response's headers and body bytes
/// as an ``NGHTTP2Bridge/NGHTTP2MessageDelegate``). The delegate must not end the session from these calls.
protocol NGHTTP2SessionDelegate: NGHTTP2MessageDelegate {
    /// A SETTINGS frame from the server was applied; the server's stream limit is now `maxConcurrentStreams`.
    func sessionReceivedSettings(maxConcurrentStreams: Int)
    /// A response ended (END_STREAM).
    func sessionReceivedEndOfStream(streamID: Int32)
    func sessionReceivedGoAway(lastStreamID: Int32, errorCode: UInt32, debugData: String)
    /// A stream closed, with `errorCode` 0 when it closed normally.
    func sessionClosedStream(streamID: Int32, errorCode: UInt32)
    /// nghttp2 wants the next piece of a request body. - Returns: how many bytes were copied, and whether the body
    /// is done.
    func sessionReadBody(streamID: Int32, into buffer: UnsafeMutableBufferPointer<UInt8>) -> (count: Int, isDone: Bool)
}

/// A client HTTP/2 session framed by libnghttp2: the C calls, and its callbacks turned into delegate calls
/// (``NGHTTP2Bridge/NGHTTP2Callbacks``). Bytes go in through ``receive(_:)``; frames come out through ``collectOutput(allocator:)``.
/// Used on one event loop.
final class NGHTTP2Session {
    /// What a submission did.
    enum Submission {
        case submitted(streamID: Int32)
        case headersTooLarge
        case refused
    }

    /// The delegate owns the session and outlives it, so no reference count is kept (the callbacks are hot).
    unowned(unsafe) let delegate: any NGHTTP2SessionDelegate
    private let session: OpaquePointer
    private let headers = HTTP2RequestHeaders()
    /// What the callbacks find the session by.
    private var userData: NGHTTP2UserData?

    /// Starts a session: the connection preface and our SETTINGS (no server push, 1 MiB stream windows, 16 MiB
    /// for the connection) go out with the first ``collectOutput(allocator:)``. Until the server's SETTINGS arrive,
    /// nghttp2 assumes it allows one stream.
    init(delegate: any NGHTTP2SessionDelegate) {
        self.delegate = delegate
        var option: OpaquePointer?
        nghttp2_option_new(&option)
        nghttp2_option_set_peer_max_concurrent_streams(option, 1)
        let callbacks = NGHTTP2Callbacks.make()
        var session: OpaquePointer?
        nghttp2_session_client_new2(&session, callbacks, nil, option)
        nghttp2_session_callbacks_del(callbacks)
        nghttp2_option_del(option)
        self.session = session!
        // No callback runs before the first receive or send, so the user data can follow the initialisation.
        let userData = NGHTTP2UserData(receiver: self, delegate: delegate)
        self.userData = userData
        nghttp2_session_set_user_data(self.session, userData.pointer)
        var entries = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: 1 << 20),
        ]
        nghttp2_submit_settings(self.session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &entries, entries.count)
        nghttp2_session_set_local_window_size(self.session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, 1 << 24)
    }

    deinit {
        nghttp2_session_del(self.session)
    }

    /// The id the next request gets, or `nil` once ids are spent.
    var nextStreamID: Int32? {
        let next = nghttp2_session_get_next_stream_id(self.session)
        return next <= UInt32(Int32.max) ? Int32(next) : nil
    }

    /// Whether nghttp2 wants neither to read nor to write any more (after GOAWAY, once its streams are done).
    var isDone: Bool {
        nghttp2_session_want_read(self.session) == 0 && nghttp2_session_want_write(self.session) == 0
    }

    /// The server's `MAX_CONCURRENT_STREAMS` as nghttp2 applies it (unlimited is `UInt32.max`).
    private var maxConcurrentStreams: Int {
        Int(nghttp2_session_get_remote_settings(self.session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS))
    }

    /// Submits a request; its body (if any) is read through the delegate as nghttp2 sends it.
    func submitRequest(_ exchange: HTTP2Exchange, authorization: String) -> Submission {
        let streamID = self.headers.withHeaders(of: exchange, authorization: authorization) { nameValues, count in
            guard !exchange.request.body.isEmpty else {
                return nghttp2_submit_request(self.session, nil, nameValues, count, nil, nil)
            }
            var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: NGHTTP2Callbacks.readBody)
            return nghttp2_submit_request(self.session, nil, nameValues, count, &provider, nil)
        }
        guard let streamID else { return .headersTooLarge }
        return streamID > 0 ? .submitted(streamID: streamID) : .refused
    }

    /// Resets a stream (RST_STREAM, CANCEL).
    func cancelStream(_ streamID: Int32) {
        nghttp2_submit_rst_stream(self.session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, NGHTTP2_CANCEL.rawValue)
    }

    /// Queues a PING.
    func ping() {
        nghttp2_submit_ping(self.session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil)
    }

    /// Decodes bytes from the server, calling the delegate for what they hold.
    func receive(_ buffer: ByteBuffer) throws(TransportError) {
        let consumed = buffer.withUnsafeReadableBytes { bytes in
            nghttp2_session_mem_recv(self.session, bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count)
        }
        if consumed < 0 {
            throw TransportError(.connectionLost, "HTTP/2 protocol error: \(String(cString: nghttp2_strerror(Int32(consumed))))")
        }
    }

    /// Serialises every frame nghttp2 has ready. - Returns: one buffer with all of them, or `nil` when none.
    func collectOutput(allocator: ByteBufferAllocator) throws(TransportError) -> ByteBuffer? {
        var output: ByteBuffer?
        while true {
            var data: UnsafePointer<UInt8>?
            let length = nghttp2_session_mem_send(self.session, &data)
            if length < 0 {
                throw TransportError(.connectionLost, "HTTP/2 error: \(String(cString: nghttp2_strerror(Int32(length))))")
            }
            guard length > 0, let data else { return output }
            if output == nil { output = allocator.buffer(capacity: max(length, 16 * 1024)) }
            output!.writeBytes(UnsafeRawBufferPointer(start: data, count: length))
        }
    }
}

/// The callbacks' other reports, handed to the delegate.
extension NGHTTP2Session: NGHTTP2CallbackReceiver {
    func nghttp2BeganHeaders(streamID: Int32, isRequest: Bool) {}

    func nghttp2ReceivedFrame(_ frame: NGHTTP2Frame) {
        switch frame {
        case .headers(let streamID, endsStream: true), .data(let streamID, endsStream: true):
            self.delegate.sessionReceivedEndOfStream(streamID: streamID)
        case .settings(isAcknowledgement: false):
            self.delegate.sessionReceivedSettings(maxConcurrentStreams: self.maxConcurrentStreams)
        case .goAway(let lastStreamID, let errorCode, let debugData):
            self.delegate.sessionReceivedGoAway(lastStreamID: lastStreamID, errorCode: errorCode, debugData: debugData)
        case .headers, .data, .settings, .ping:
            break
        }
    }

    func nghttp2ClosedStream(streamID: Int32, errorCode: UInt32) {
        self.delegate.sessionClosedStream(streamID: streamID, errorCode: errorCode)
    }

    func nghttp2ReadBody(streamID: Int32, into buffer: UnsafeMutableBufferPointer<UInt8>) -> (count: Int, isDone: Bool) {
        self.delegate.sessionReadBody(streamID: streamID, into: buffer)
    }
}
