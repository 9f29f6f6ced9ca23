import CNGHTTP2

/// The C callbacks nghttp2 calls while it parses input; each hands over to the ``HTTP2ConnectionHandler`` passed as
/// the session's user data. They run on the connection's event loop, inside `nghttp2_session_mem_recv` or
/// `nghttp2_session_mem_send`.
enum NGHTTP2Callbacks {
    private static func handler(_ userData: UnsafeMutableRawPointer?) -> HTTP2ConnectionHandler {
        Unmanaged<HTTP2ConnectionHandler>.fromOpaque(userData!).takeUnretainedValue()
    }

    static let onHeader: nghttp2_on_header_callback = { _, frame, name, nameLength, value, valueLength, _, userData in
        guard let frame, let name, let value, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) else { return 0 }
        handler(userData).receiveHeader(
            streamID: frame.pointee.hd.stream_id,
            name: UnsafeBufferPointer(start: name, count: nameLength),
            value: UnsafeBufferPointer(start: value, count: valueLength)
        )
        return 0
    }

    static let onDataChunk: nghttp2_on_data_chunk_recv_callback = { _, _, streamID, data, length, userData in
        guard let data else { return 0 }
        handler(userData).receiveData(streamID: streamID, bytes: UnsafeBufferPointer(start: data, count: length))
        return 0
    }

    static let onFrame: nghttp2_on_frame_recv_callback = { _, frame, userData in
        guard let frame else { return 0 }
        let header = frame.pointee.hd
        let endsStream = header.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        switch UInt32(header.type) {
        case NGHTTP2_HEADERS.rawValue, NGHTTP2_DATA.rawValue:
            if endsStream { handler(userData).receiveEndOfResponse(streamID: header.stream_id) }
        case NGHTTP2_GOAWAY.rawValue:
            let goAway = frame.pointee.goaway
            let debugData = goAway.opaque_data.map { String(decoding: UnsafeBufferPointer(start: $0, count: goAway.opaque_data_len), as: UTF8.self) }
            handler(userData).receiveGoAway(lastStreamID: goAway.last_stream_id, errorCode: goAway.error_code, debugData: debugData ?? "")
        default:
            break
        }
        return 0
    }

    static let onStreamClose: nghttp2_on_stream_close_callback = { _, streamID, errorCode, userData in
        handler(userData).closeStream(streamID, errorCode: errorCode)
        return 0
    }

    static let readBody: nghttp2_data_source_read_callback = { _, streamID, buffer, length, flags, _, userData in
        guard let buffer, let flags else { return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
        let (copied, isDone) = handler(userData).readBody(streamID: streamID, into: UnsafeMutableBufferPointer(start: buffer, count: length))
        if isDone { flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue }
        return copied
    }

    /// A callback table with every callback above.
    static func make() -> OpaquePointer {
        var callbacks: OpaquePointer?
        nghttp2_session_callbacks_new(&callbacks)
        nghttp2_session_callbacks_set_on_header_callback(callbacks, Self.onHeader)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, Self.onDataChunk)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, Self.onFrame)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, Self.onStreamClose)
        return callbacks!
    }
}
