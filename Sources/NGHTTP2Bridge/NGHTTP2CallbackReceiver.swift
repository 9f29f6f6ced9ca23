/// What nghttp2's callbacks (``NGHTTP2Callbacks``) report to the session object of one side, the APNs client's or
/// the emulator's; the messages' headers and bytes go straight to the session's delegate
/// (``NGHTTP2MessageDelegate``). Called on the connection's event loop, inside `nghttp2_session_mem_recv` or
/// `nghttp2_session_mem_send`.
package protocol NGHTTP2CallbackReceiver: AnyObject {
    /// A header block begins on a stream; `isRequest` when it opens a request (a server's first block of a stream).
    func nghttp2BeganHeaders(streamID: Int32, isRequest: Bool)
    /// A frame arrived and nghttp2 applied it (after its headers or data were reported).
    func nghttp2ReceivedFrame(_ frame: NGHTTP2Frame)
    /// A stream closed, with `errorCode` 0 when it closed normally.
    func nghttp2ClosedStream(streamID: Int32, errorCode: UInt32)
    /// nghttp2 wants the next piece of a body being sent. - Returns: how many bytes were copied, and whether the
    /// body is done.
    func nghttp2ReadBody(streamID: Int32, into buffer: UnsafeMutableBufferPointer<UInt8>) -> (count: Int, isDone: Bool)
}

/// The owner of a session (the connection handler of the APNs transport or of the emulator): what nghttp2 parses of
/// the messages, reported to it as the callbacks run.
package protocol NGHTTP2MessageDelegate: AnyObject {
    /// One header of a header block, pseudo-headers included.
    func sessionReceivedHeader(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>, streamID: Int32)
    /// A piece of a body.
    func sessionReceivedData(_ bytes: UnsafeBufferPointer<UInt8>, streamID: Int32)
}

/// A frame as the receiver is told of it: the kinds either side acts on.
package enum NGHTTP2Frame {
    /// A header block ended; `endsStream` with END_STREAM.
    case headers(streamID: Int32, endsStream: Bool)
    /// A DATA frame ended; `endsStream` with END_STREAM.
    case data(streamID: Int32, endsStream: Bool)
    /// SETTINGS, applied by nghttp2 (a first one without a stream limit makes it unlimited); or their acknowledgement.
    case settings(isAcknowledgement: Bool)
    /// A PING (nghttp2 answers it), or the acknowledgement of ours.
    case ping(isAcknowledgement: Bool)
    /// GOAWAY, with its opaque data as text.
    case goAway(lastStreamID: Int32, errorCode: UInt32, debugData: String)
}

/// The user data of an nghttp2 session: whom its callbacks call. The receiver keeps it for the session's life, and
/// the delegate owns the receiver, so no reference count is kept (the callbacks are hot).
package final class NGHTTP2UserData {
    package unowned(unsafe) let receiver: any NGHTTP2CallbackReceiver
    package unowned(unsafe) let delegate: any NGHTTP2MessageDelegate

    package init(receiver: any NGHTTP2CallbackReceiver, delegate: any NGHTTP2MessageDelegate) {
        self.receiver = receiver
        self.delegate = delegate
    }

    /// The pointer to pass to `nghttp2_session_set_user_data`.
    package var pointer: UnsafeMutableRawPointer {
        Unmanaged.passUnretained(self).toOpaque()
    }
}
