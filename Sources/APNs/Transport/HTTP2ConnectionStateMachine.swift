import DequeModule
import NIOCore

/// One HTTP/2 connection's life as a value. The handler feeds it what happened (the TLS handshake, what nghttp2
/// decoded, timer ticks, the channel's end) and performs the ``Action`` it returns. It does no I/O, reads no clock
/// and knows nothing of nghttp2 or of APNs; it holds the exchanges waiting for a stream and those on one, and sorts
/// them when the connection winds down: answered, failed, or sent again elsewhere.
///
/// ```
/// connecting ──h2──▶ active ──GOAWAY, ids spent──▶ draining ──last stream done──▶ closing ──channel gone──▶ closed
///     └──────────────────┴── no h2, error, PING unanswered, close ──────────────────▶ closing
/// ```
struct HTTP2ConnectionStateMachine {
    /// HTTP/2's `REFUSED_STREAM` (RFC 9113 §7): the server did not process the stream, so it may be sent again.
    static let refusedStream: UInt32 = 0x7

    /// Changed only by the transitions below and in the extensions.
    var state: State
    let settings: TransportSettings

    /// - Parameter previousError: Why the connection this one replaces ended, quoted if queued exchanges time out
    ///   before this one connects.
    init(previousError: TransportError?, settings: TransportSettings) {
        self.state = .connecting(Connecting(queue: [], previousError: previousError))
        self.settings = settings
    }

    // MARK: - Work from the pool

    /// Exchanges to send. They wait while the connection is being made or closed; a connection that takes no new
    /// work hands them straight back.
    mutating func enqueue(_ exchanges: [HTTP2Exchange]) -> Action {
        switch self.state {
        case .connecting(var connecting):
            self.state = .modifying
            connecting.queue.append(contentsOf: exchanges)
            self.state = .connecting(connecting)
            return .none
        case .active(var active):
            self.state = .modifying
            active.queue.append(contentsOf: exchanges)
            self.state = .active(active)
            return .pump
        case .closing(var closing):
            self.state = .modifying
            closing.queue.append(contentsOf: exchanges)
            self.state = .closing(closing)
            return .none
        case .draining, .closed:
            return .retry(exchanges)
        case .modifying:
            preconditionFailure("HTTP2ConnectionStateMachine: invalid state")
        }
    }

    /// The pool closes the connection (shutdown). Call only when the channel exists; without one, the end is
    /// ``connectionClosed(error:)`` at once.
    mutating func closeRequested() -> Action {
        switch self.state {
        case .connecting(let connecting):
            self.state = .closing(Closing(queue: connecting.queue, streams: [:], error: nil))
        case .active(let active):
            self.state = .closing(Closing(queue: active.queue, streams: active.streams, error: nil))
        case .draining(let draining):
            self.state = .closing(Closing(queue: [], streams: draining.streams, error: draining.error))
        case .closing, .closed:
            return .none
        case .modifying:
            preconditionFailure("HTTP2ConnectionStateMachine: invalid state")
        }
        return .close
    }

    // MARK: - The channel

    /// The TLS handshake finished; `negotiatedProtocol` is what ALPN agreed on.
    mutating func tlsHandshakeCompleted(negotiatedProtocol: String?, now: NIODeadline) -> Action {
        switch self.state {
        case .connecting(let connecting):
            guard negotiatedProtocol == "h2" else {
                let error = TransportError(.connectionFailed, "the server did not agree to HTTP/2 (ALPN h2)")
                self.state = .closing(Closing(queue: connecting.queue, streams: [:], error: error))
                return .close
            }
            // Assume one stream until the server's SETTINGS say more: APNs allows one before a valid token.
            let keepAlive = KeepAlive(lastReadAt: now, pingSentAt: nil)
            self.state = .active(Active(queue: connecting.queue, streams: [:], streamLimit: 1, keepAlive: keepAlive))
            return .startSession
        case .closing, .closed:
            // Closed while the connection was being made (the pool shut down): do not start using it.
            return .close
        case .active, .draining:
            // A second handshake on one connection (renegotiation) changes nothing here.
            return .none
        case .modifying:
            preconditionFailure("HTTP2ConnectionStateMachine: invalid state")
        }
    }

    /// Bytes arrived from the server: it is alive, and any PING counts as answered.
    mutating func bytesReceived(now: NIODeadline) {
        switch self.state {
        case .active(var active):
            self.state = .modifying
            active.keepAlive = KeepAlive(lastReadAt: now, pingSentAt: nil)
            self.state = .active(active)
        case .draining(var draining):
            self.state = .modifying
            draining.keepAlive = KeepAlive(lastReadAt: now, pingSentAt: nil)
            self.state = .draining(draining)
        case .connecting, .closing, .closed:
            break
        case .modifying:
            preconditionFailure("HTTP2ConnectionStateMachine: invalid state")
        }
    }

    /// The handler wrote what nghttp2 had ready.
    /// - Parameter sessionIsDone: nghttp2 wants neither to read nor to write any more.
    mutating func outputFlushed(sessionIsDone: Bool) -> Action {
        switch self.state {
        case .active(let active):
            guard sessionIsDone else { return .none }
            self.state = .closing(Closing(queue: active.queue, streams: active.streams, error: nil))
            return .close
        case .draining(let draining):
            guard sessionIsDone || draining.streams.isEmpty else { return .none }
            self.state = .closing(Closing(queue: [], streams: draining.streams, error: draining.error))
            return .close
        case .connecting, .closing, .closed:
            return .none
        case .modifying:
            preconditionFailure("HTTP2ConnectionStateMachine: invalid state")
        }
    }

    /// nghttp2 failed to read or write (a protocol error): the connection is unusable.
    mutating func sessionFailed(_ error: TransportError) -> Action {
        switch self.state {
        case .active(let active):
            self.state = .closing(Closing(queue: active.queue, streams: active.streams, error: error))
        case .draining(let draining):
            self.state = .closing(Closing(queue: [], streams: draining.streams, error: error))
        case .closing(var closing):
            self.state = .modifying
            closing.error = error
            self.state = .closing(closing)
        case .connecting, .closed, .modifying:
            preconditionFailure("HTTP2ConnectionStateMachine: a session failed where there is none")
        }
        return .close
    }

    /// The channel reported an error; the first one says why the connection ends.
    mutating func errorCaught(_ description: String) -> Action {
        switch self.state {
        case .connecting(let connecting):
            let error = TransportError(.connectionFailed, description)
            self.state = .closing(Closing(queue: connecting.queue, streams: [:], error: error))
        case .active(let active):
            let error = TransportError(.connectionLost, description)
            self.state = .closing(Closing(queue: active.queue, streams: active.streams, error: error))
        case .draining(let draining):
            let error = draining.error ?? TransportError(.connectionLost, description)
            self.state = .closing(Closing(queue: [], streams: draining.streams, error: error))
        case .closing(var closing):
            guard closing.error == nil else { break }
            self.state = .modifying
            closing.error = TransportError(.connectionLost, description)
            self.state = .closing(closing)
        case .closed:
            break
        case .modifying:
            preconditionFailure("HTTP2ConnectionStateMachine: invalid state")
        }
        return .close
    }

    /// The channel is gone, or was never made (`error` says why). Exchanges on a stream may or may not have been
    /// processed: each is sent again until it has been lost with a connection ``TransportSettings/maximumAttempts``
    /// times, then fails. Queued exchanges are sent again.
    mutating func connectionClosed(error: TransportError?) -> Action {
        if case .closed = self.state { return .none }
        let (queue, streams, stateError): (Deque<HTTP2Exchange>, [Int32: HTTP2Exchange], TransportError?) =
            switch self.state {
            case .connecting(let connecting): (connecting.queue, [:], nil)
            case .active(let active): (active.queue, active.streams, nil)
            case .draining(let draining): ([], draining.streams, draining.error)
            case .closing(let closing): (closing.queue, closing.streams, closing.error)
            case .closed, .modifying: preconditionFailure("HTTP2ConnectionStateMachine: invalid state")
            }
        self.state = .closed
        var retry: [HTTP2Exchange] = []
        var fail: [HTTP2Exchange] = []
        for streamID in streams.keys.sorted() {
            let exchange = streams[streamID]!
            exchange.lostInFlight += 1
            if exchange.lostInFlight >= self.settings.maximumAttempts {
                fail.append(exchange)
            } else {
                retry.append(exchange)
            }
        }
        retry.append(contentsOf: queue)
        return .finish(retry: retry, fail: fail, error: error ?? stateError ?? TransportError(.connectionLost, "the connection closed"))
    }
}
