import DequeModule
import NIOCore

extension HTTP2ConnectionStateMachine {
    /// Where a connection is in its life; each state holds the exchanges it is responsible for.
    enum State {
        /// TCP and TLS are being set up; exchanges wait in the queue.
        case connecting(Connecting)
        /// The HTTP/2 session runs; exchanges are admitted as the server's stream limit allows.
        case active(Active)
        /// The server sent GOAWAY, or stream ids ran out: no new streams. The streams the server kept are still
        /// answered; the connection closes once they are.
        case draining(Draining)
        /// The channel is being closed. Answers that still arrive count; everything else waits for the end.
        case closing(Closing)
        /// Everything was handed back to the pool.
        case closed
        /// Only inside a transition, so that a state's collections are changed in place rather than copied.
        case modifying
    }

    struct Connecting {
        var queue: Deque<HTTP2Exchange>
        /// Why the connection this one replaces ended; quoted when a queued exchange's deadline passes.
        var previousError: TransportError?
    }

    struct Active {
        var queue: Deque<HTTP2Exchange>
        /// Exchanges on a stream, by stream id.
        var streams: [Int32: HTTP2Exchange]
        /// The server's `MAX_CONCURRENT_STREAMS`: 1 until its SETTINGS say more (APNs allows one stream until a
        /// request carries a valid provider token, then raises it).
        var streamLimit: Int
        var keepAlive: KeepAlive
    }

    struct Draining {
        var streams: [Int32: HTTP2Exchange]
        /// The highest stream the server said it may process; `Int32.max` when the client stopped by itself.
        var lastStreamID: Int32
        /// Why the connection stopped taking work: the GOAWAY, or `nil` when stream ids ran out.
        var error: TransportError?
        var keepAlive: KeepAlive
    }

    struct Closing {
        var queue: Deque<HTTP2Exchange>
        var streams: [Int32: HTTP2Exchange]
        /// Why the connection ends, when known.
        var error: TransportError?
    }

    /// When the server was last heard from, and whether a PING is waiting for it to answer.
    struct KeepAlive {
        var lastReadAt: NIODeadline
        var pingSentAt: NIODeadline?
    }

    /// What the handler does after an event.
    enum Action {
        /// Nothing.
        case none
        /// Start the HTTP/2 session (preface and SETTINGS), then pump.
        case startSession
        /// Admit what the stream limit allows and write what nghttp2 has ready.
        case pump
        /// Send a PING.
        case sendPing
        /// Close the channel; its end comes back as ``HTTP2ConnectionStateMachine/connectionClosed(error:)``.
        case close
        /// The exchange's response is complete: report it.
        case succeed(HTTP2Exchange)
        /// The exchange failed: report it.
        case fail(HTTP2Exchange, TransportError)
        /// The server did not process these: send them again on another connection.
        case retry([HTTP2Exchange])
        /// The connection takes no new work: have the pool replace it and send these (which the server never
        /// processed) on the replacement.
        case drain(retry: [HTTP2Exchange])
        /// The connection is over: report `fail` as failed with `error`, send `retry` again elsewhere, and tell
        /// the pool why it ended.
        case finish(retry: [HTTP2Exchange], fail: [HTTP2Exchange], error: TransportError)
    }

    /// Why nghttp2 did not take an admitted exchange.
    enum SubmissionFailure {
        /// Its headers do not fit the header block.
        case headersTooLarge
        /// The session refuses new streams.
        case refusedBySession
    }

    /// What a deadline check found.
    struct DeadlineActions {
        /// Exchanges to report as failed, with why.
        var failures: [(exchange: HTTP2Exchange, error: TransportError)] = []
        /// Streams to reset (RST_STREAM, CANCEL); their exchanges are among the failures.
        var cancelledStreams: [Int32] = []
    }
}
