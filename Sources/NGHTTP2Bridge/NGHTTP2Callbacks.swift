package import CNGHTTP2

/// The C callbacks nghttp2 calls while it parses input or serialises output; each hands over to the
/// ``NGHTTP2CallbackReceiver`` or the ``NGHTTP2MessageDelegate`` of the ``NGHTTP2UserData`` that is the session's
/// user data. The APNs transport and the emulator share them.
package enum NGHTTP2Callbacks {
    private static func userData(_ pointer: UnsafeMutableRawPointer?) -> NGHTTP2UserData {
        Unmanaged<NGHTTP2UserData>.fromOpaque(pointer!).takeUnretainedValue()
    }

    private static func receiver(_ pointer: UnsafeMutableRawPointer?) -> any NGHTTP2CallbackReceiver {
        Self.userData(pointer).receiver
    }

    static let onBeginHeaders: nghttp2_on_begin_headers_callback = { _, frame, userData in
        guard let frame, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) else { return 0 }
        receiver(userData).nghttp2BeganHeaders(streamID: frame.pointee.hd.stream_id, isRequest: frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST)
        return 0
    }

    static let onHeader: nghttp2_on_header_callback = { _, frame, name, nameLength, value, valueLength, _, userData in
        guard let frame, let name, let value, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) else { return 0 }
        Self.userData(userData).delegate.sessionReceivedHeader(
            name: UnsafeBufferPointer(start: name, count: nameLength),
            value: UnsafeBufferPointer(start: value, count: valueLength),
            streamID: frame.pointee.hd.stream_id
        )
        return 0
    }

    static let onDataChunk: nghttp2_on_data_chunk_recv_callback = { _, _, streamID, data, length, userData in
        guard let data else { return 0 }
        Self.userData(userData).delegate.sessionReceivedData(UnsafeBufferPointer(start: data, count: length), streamID: streamID)
        return 0
    }

    static let onFrame: nghttp2_on_frame_recv_callback = { _, frame, userData in
        guard let frame else { return 0 }
        let header = frame.pointee.hd
        let endsStream = header.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        let isAcknowledgement = header.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) != 0
        switch UInt32(header.type) {
        case NGHTTP2_HEADERS.rawValue:
            receiver(userData).nghttp2ReceivedFrame(.headers(streamID: header.stream_id, endsStream: endsStream))
        case NGHTTP2_DATA.rawValue:
            receiver(userData).nghttp2ReceivedFrame(.data(streamID: header.stream_id, endsStream: endsStream))
        case NGHTTP2_SETTINGS.rawValue:
            receiver(userData).nghttp2ReceivedFrame(.settings(isAcknowledgement: isAcknowledgement))
        case NGHTTP2_PING.rawValue:
            receiver(userData).nghttp2ReceivedFrame(.ping(isAcknowledgement: isAcknowledgement))
        case NGHTTP2_GOAWAY.rawValue:
            let goAway = frame.pointee.goaway
            let debugData = goAway.opaque_data.map { String(decoding: UnsafeBufferPointer(start: $0, count: goAway.opaque_data_len), as: UTF8.self) }
            receiver(userData).nghttp2ReceivedFrame(
                .goAway(lastStreamID: goAway.last_stream_id, errorCode: goAway.error_code, debugData: debugData ?? "")
            )
        default:
            break
        }
        return 0
    }

    static let onStreamClose: nghttp2_on_stream_close_callback = { _, streamID, errorCode, userData in
        receiver(userData).nghttp2ClosedStream(streamID: streamID, errorCode: errorCode)
        return 0
    }

    /// Reads a body being sent from the receiver: the read callback of a submission's `nghttp2_data_provider`.
    package static let readBody: nghttp2_data_source_read_callback = { _, streamID, buffer, length, flags, _, userData in
        guard let buffer, let flags else { return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
        let (copied, isDone) = receiver(userData).nghttp2ReadBody(streamID: streamID, into: UnsafeMutableBufferPointer(start: buffer, count: length))
        if isDone { flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue }
        return copied
    }

    /// A callback table with every callback above; the caller deletes it (`nghttp2_session_callbacks_del`) once the
    /// session is made.
    package static func make() -> OpaquePointer {
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
