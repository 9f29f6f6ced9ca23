import CNGHTTP2

/// The C callbacks nghttp2 calls while it parses input or serialises output; each hands over to the
/// ``NGHTTP2ServerSession`` passed as the session's user data, and on to its delegate. They run on the connection's
/// event loop, inside `nghttp2_session_mem_recv` or `nghttp2_session_mem_send`.
enum NGHTTP2ServerCallbacks {
    private static func session(_ userData: UnsafeMutableRawPointer?) -> NGHTTP2ServerSession {
        Unmanaged<NGHTTP2ServerSession>.fromOpaque(userData!).takeUnretainedValue()
    }

    static let onBeginHeaders: nghttp2_on_begin_headers_callback = { _, frame, userData in
        guard let frame, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue),
            frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST
        else { return 0 }
        session(userData).delegate.sessionBeganRequest(streamID: frame.pointee.hd.stream_id)
        return 0
    }

    static let onHeader: nghttp2_on_header_callback = { _, frame, name, nameLength, value, valueLength, _, userData in
        guard let frame, let name, let value, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) else { return 0 }
        session(userData).delegate.sessionReceivedHeader(
            name: UnsafeBufferPointer(start: name, count: nameLength),
            value: UnsafeBufferPointer(start: value, count: valueLength),
            streamID: frame.pointee.hd.stream_id
        )
        return 0
    }

    static let onDataChunk: nghttp2_on_data_chunk_recv_callback = { _, _, streamID, data, length, userData in
        guard let data else { return 0 }
        session(userData).delegate.sessionReceivedData(UnsafeBufferPointer(start: data, count: length), streamID: streamID)
        return 0
    }

    static let onFrame: nghttp2_on_frame_recv_callback = { _, frame, userData in
        guard let frame else { return 0 }
        let header = frame.pointee.hd
        let endsStream = header.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        switch UInt32(header.type) {
        case NGHTTP2_HEADERS.rawValue:
            let delegate = session(userData).delegate
            delegate.sessionReceivedHeaderBlock(streamID: header.stream_id)
            if endsStream { delegate.sessionReceivedEndOfStream(streamID: header.stream_id) }
        case NGHTTP2_DATA.rawValue:
            if endsStream { session(userData).delegate.sessionReceivedEndOfStream(streamID: header.stream_id) }
        case NGHTTP2_PING.rawValue:
            if header.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) == 0 {
                session(userData).delegate.sessionReceivedPing()
            }
        default:
            break
        }
        return 0
    }

    static let onStreamClose: nghttp2_on_stream_close_callback = { _, streamID, _, userData in
        let session = session(userData)
        session.streamClosed(streamID)
        session.delegate.sessionClosedStream(streamID: streamID)
        return 0
    }

    static let readBody: nghttp2_data_source_read_callback = { _, streamID, buffer, length, flags, _, userData in
        guard let buffer, let flags else { return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
        let (copied, isDone) = session(userData).readBody(streamID: streamID, into: UnsafeMutableBufferPointer(start: buffer, count: length))
        if isDone { flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue }
        return copied
    }

    /// A callback table with every callback above.
    static func make() -> OpaquePointer {
        var callbacks: OpaquePointer?
        nghttp2_session_callbacks_new(&callbacks)
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, Self.onBeginHeaders)
        nghttp2_session_callbacks_set_on_header_callback(callbacks, Self.onHeader)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, Self.onDataChunk)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, Self.onFrame)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, Self.onStreamClose)
        return callbacks!
    }
}
