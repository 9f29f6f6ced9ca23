import DequeModule
import NIOCore

/// Admission and what nghttp2 decoded: streams opening, ending, and GOAWAY.
extension HTTP2ConnectionStateMachine {
    /// The next exchange to put on a stream, when the connection is active and the server's stream limit allows.
    /// It counts as in flight on `streamID` from now; report with ``submissionFailed(streamID:_:)`` if nghttp2
    /// does not take it.
    /// - Parameter streamID: The id nghttp2 gives the next request.
    mutating func admitNext(as streamID: Int32) -> HTTP2Exchange? {
        guard case .active(var active) = self.state, active.streams.count < active.streamLimit, !active.queue.isEmpty else {
            return nil
        }
        self.state = .modifying
        let exchange = active.queue.removeFirst()
        active.streams[streamID] = exchange
        self.state = .active(active)
        return exchange
    }

    /// Whether every stream the server allows is in flight and more exchanges wait, after the server raised its
    /// limit from the one stream of an unauthenticated connection: another connection would carry them sooner.
    var isSaturated: Bool {
        guard case .active(let active) = self.state else { return false }
        return active.streamLimit > 1 && active.streams.count >= active.streamLimit && !active.queue.isEmpty
    }

    /// nghttp2 did not take the exchange just admitted as `streamID`.
    mutating func submissionFailed(streamID: Int32, _ failure: SubmissionFailure) -> Action {
        guard case .active(var active) = self.state, let exchange = active.streams[streamID] else {
            preconditionFailure("HTTP2ConnectionStateMachine: stream \(streamID) was not just admitted")
        }
        self.state = .modifying
        active.streams[streamID] = nil
        switch failure {
        case .headersTooLarge:
            self.state = .active(active)
            return .fail(exchange, TransportError(.streamReset, "the request's headers are too large"))
        case .refusedBySession:
            // This connection is done; the exchange goes elsewhere with the rest of the queue.
            active.queue.prepend(exchange)
            return self.startDraining(active, lastStreamID: .max, error: nil)
        }
    }

    /// The session has no stream ids left (2³⁰ requests on one connection): it takes no new work.
    mutating func streamIDsExhausted() -> Action {
        guard case .active(let active) = self.state else { return .none }
        self.state = .modifying
        return self.startDraining(active, lastStreamID: .max, error: nil)
    }

    /// The server's SETTINGS were applied; its stream limit is now `maxConcurrentStreams`.
    mutating func settingsReceived(maxConcurrentStreams: Int) {
        switch self.state {
        case .active(var active):
            self.state = .modifying
            active.streamLimit = maxConcurrentStreams
            self.state = .active(active)
        case .draining, .closing:
            break  // no new streams are opened any more
        case .connecting, .closed, .modifying:
            preconditionFailure("HTTP2ConnectionStateMachine: SETTINGS where there is no session")
        }
    }

    /// The exchange on a stream, to read its response into or its body from.
    func exchange(onStream streamID: Int32) -> HTTP2Exchange? {
        switch self.state {
        case .active(let active): active.streams[streamID]
        case .draining(let draining): draining.streams[streamID]
        case .closing(let closing): closing.streams[streamID]
        case .connecting, .closed, .modifying: nil
        }
    }

    /// A stream's response arrived whole (END_STREAM): it counts once the stream closes, whatever happens to the
    /// request half meanwhile.
    func responseEnded(streamID: Int32) {
        self.exchange(onStream: streamID)?.isResponseComplete = true
    }

    /// A stream closed: its exchange is answered if its response arrived whole, sent again if the server refused
    /// it, else failed.
    mutating func streamClosed(_ streamID: Int32, errorCode: UInt32) -> Action {
        let exchange: HTTP2Exchange?
        switch self.state {
        case .active(var active):
            self.state = .modifying
            exchange = active.streams.removeValue(forKey: streamID)
            self.state = .active(active)
        case .draining(var draining):
            self.state = .modifying
            exchange = draining.streams.removeValue(forKey: streamID)
            self.state = .draining(draining)
        case .closing(var closing):
            self.state = .modifying
            exchange = closing.streams.removeValue(forKey: streamID)
            self.state = .closing(closing)
        case .connecting, .closed, .modifying:
            preconditionFailure("HTTP2ConnectionStateMachine: a stream closed where there is no session")
        }
        // Already reported (its deadline passed), or handed back (above a GOAWAY's last stream id).
        guard let exchange else { return .none }
        if exchange.isResponseComplete {
            return .succeed(exchange)
        }
        if errorCode == Self.refusedStream {
            return .retry([exchange])
        }
        return .fail(exchange, TransportError(.streamReset, "the server reset the stream (HTTP/2 error \(errorCode))"))
    }

    /// The server sent GOAWAY: no new streams. Streams above `lastStreamID` were not processed and go elsewhere
    /// at once; those at or below it are still answered.
    mutating func goAwayReceived(lastStreamID: Int32, errorCode: UInt32, debugData: String) -> Action {
        let error = TransportError(.connectionLost, "GOAWAY (error \(errorCode)) \(debugData)")
        switch self.state {
        case .active(let active):
            self.state = .modifying
            return self.startDraining(active, lastStreamID: lastStreamID, error: error)
        case .draining(var draining):
            // APNs sometimes sends two.
            self.state = .modifying
            draining.lastStreamID = min(draining.lastStreamID, lastStreamID)
            draining.error = error
            let above = Self.removeStreams(above: draining.lastStreamID, from: &draining.streams)
            self.state = .draining(draining)
            return above.isEmpty ? .none : .retry(above)
        case .closing(var closing):
            self.state = .modifying
            closing.error = error
            let above = Self.removeStreams(above: lastStreamID, from: &closing.streams)
            self.state = .closing(closing)
            return above.isEmpty ? .none : .retry(above)
        case .connecting, .closed, .modifying:
            preconditionFailure("HTTP2ConnectionStateMachine: GOAWAY where there is no session")
        }
    }

    // MARK: - Helpers

    /// Moves an active connection to draining. - Returns: `.drain` with the queue and the streams above
    /// `lastStreamID`.
    private mutating func startDraining(_ active: Active, lastStreamID: Int32, error: TransportError?) -> Action {
        var streams = active.streams
        let above = Self.removeStreams(above: lastStreamID, from: &streams)
        self.state = .draining(Draining(streams: streams, lastStreamID: lastStreamID, error: error, keepAlive: active.keepAlive))
        return .drain(retry: Array(active.queue) + above)
    }

    /// Takes the streams above `lastStreamID` out, in stream order.
    private static func removeStreams(above lastStreamID: Int32, from streams: inout [Int32: HTTP2Exchange]) -> [HTTP2Exchange] {
        let ids = streams.keys.filter { $0 > lastStreamID }.sorted()
        return ids.map { streams.removeValue(forKey: $0)! }
    }
}
