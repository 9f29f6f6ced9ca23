import CNGHTTP2

/// The C callbacks nghttp2 calls while it parses input or serialises output; each hands over to the delegate of
/// the ``NGHTTP2Session`` passed as the session's user data. They run on the connection's event loop, inside
/// `nghttp2_session_mem_recv` or `nghttp2_session_mem_send`.
enum NGHTTP2Callbacks {
    private static func delegate(_ userData: UnsafeMutableRawPointer?) -> any NGHTTP2SessionDelegate {
        Unmanaged<NGHTTP2Session>.fromOpaque(userData!).takeUnretainedValue().delegate
    }

    static let onHeader: nghttp2_on_header_callback = { _, frame, name, nameLength, value, valueLength, _, userData in
        guard let frame, let name, let value, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) else { return 0 }
        delegate(userData).sessionReceivedHeader(
            name: UnsafeBufferPointer(start: name, count: nameLength),
            value: UnsafeBufferPointer(start: value, count: valueLength),
            streamID: frame.pointee.hd.stream_id
        )
        return 0
    }

    static let onDataChunk: nghttp2_on_data_chunk_recv_callback = { _, _, streamID, data, length, userData in
        guard let data else { return 0 }
        delegate(userData).sessionReceivedData(UnsafeBufferPointer(start: data, count: length), streamID: streamID)
        return 0
    }

    static let onFrame: nghttp2_on_frame_recv_callback = { session, frame, userData in
        guard let frame else { return 0 }
        let header = frame.pointee.hd
        switch UInt32(header.type) {
        case NGHTTP2_HEADERS.rawValue, NGHTTP2_DATA.rawValue:
            if header.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0 {
                delegate(userData).sessionReceivedEndOfStream(streamID: header.stream_id)
            }
        case NGHTTP2_SETTINGS.rawValue:
            // Called once nghttp2 applied the frame (a first SETTINGS without the limit makes it unlimited).
            if header.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) == 0 {
                delegate(userData).sessionReceivedSettings(maxConcurrentStreams: NGHTTP2Session.maxConcurrentStreams(of: session))
            }
        case NGHTTP2_GOAWAY.rawValue:
            let goAway = frame.pointee.goaway
            let debugData = goAway.opaque_data.map { String(decoding: UnsafeBufferPointer(start: $0, count: goAway.opaque_data_len), as: UTF8.self) }
            delegate(userData).sessionReceivedGoAway(lastStreamID: goAway.last_stream_id, errorCode: goAway.error_code, debugData: debugData ?? "")
        default:
            break
        }
        return 0
    }

    static let onStreamClose: nghttp2_on_stream_close_callback = { _, streamID, errorCode, userData in
        delegate(userData).sessionClosedStream(streamID: streamID, errorCode: errorCode)
        return 0
    }

    static let readBody: nghttp2_data_source_read_callback = { _, streamID, buffer, length, flags, _, userData in
        guard let buffer, let flags else { return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
        let (copied, isDone) = delegate(userData).sessionReadBody(streamID: streamID, into: UnsafeMutableBufferPointer(start: buffer, count: length))
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
