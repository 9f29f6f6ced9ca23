import DequeModule
import NIOCore

/// Deadlines and keep-alive, driven by the handler's timer.
extension HTTP2ConnectionStateMachine {
    /// Fails the exchanges whose deadline passed: queued ones, and those on a stream (whose streams are reset).
    mutating func expireDeadlines(now: NIODeadline) -> DeadlineActions {
        var actions = DeadlineActions()
        let beforeSending = "deadline passed before sending"
        switch self.state {
        case .connecting(var connecting):
            guard Self.anyExpired(connecting.queue, now) else { break }
            self.state = .modifying
            let message = connecting.previousError.map { "deadline passed; last connection error: \($0.message)" } ?? beforeSending
            Self.expire(&connecting.queue, now: now, error: TransportError(.deadlineExceeded, message), into: &actions)
            self.state = .connecting(connecting)
        case .active(var active):
            guard Self.anyExpired(active.queue, now) || Self.anyExpired(active.streams.values, now) else { break }
            self.state = .modifying
            Self.expire(&active.queue, now: now, error: TransportError(.deadlineExceeded, beforeSending), into: &actions)
            Self.expire(&active.streams, now: now, into: &actions)
            self.state = .active(active)
        case .draining(var draining):
            guard Self.anyExpired(draining.streams.values, now) else { break }
            self.state = .modifying
            Self.expire(&draining.streams, now: now, into: &actions)
            self.state = .draining(draining)
        case .closing(var closing):
            guard Self.anyExpired(closing.queue, now) || Self.anyExpired(closing.streams.values, now) else { break }
            self.state = .modifying
            let message = closing.error.map { "deadline passed; last connection error: \($0.message)" } ?? beforeSending
            Self.expire(&closing.queue, now: now, error: TransportError(.deadlineExceeded, message), into: &actions)
            Self.expire(&closing.streams, now: now, into: &actions)
            self.state = .closing(closing)
        case .closed:
            break
        case .modifying:
            preconditionFailure("HTTP2ConnectionStateMachine: invalid state")
        }
        return actions
    }

    /// Keep-alive: a PING after ``TransportSettings/idlePingInterval`` without a byte from the server; the
    /// connection closes when one is unanswered for ``TransportSettings/pingTimeout``.
    mutating func keepAliveTick(now: NIODeadline) -> Action {
        switch self.state {
        case .active(var active):
            self.state = .modifying
            let action = self.keepAlive(&active.keepAlive, now: now)
            if case .close = action {
                self.state = .closing(Closing(queue: active.queue, streams: active.streams, error: Self.pingUnanswered))
            } else {
                self.state = .active(active)
            }
            return action
        case .draining(var draining):
            self.state = .modifying
            let action = self.keepAlive(&draining.keepAlive, now: now)
            if case .close = action {
                self.state = .closing(Closing(queue: [], streams: draining.streams, error: Self.pingUnanswered))
            } else {
                self.state = .draining(draining)
            }
            return action
        case .connecting, .closing, .closed:
            return .none
        case .modifying:
            preconditionFailure("HTTP2ConnectionStateMachine: invalid state")
        }
    }

    // MARK: - Helpers

    private static let pingUnanswered = TransportError(.connectionLost, "PING unanswered")

    private func keepAlive(_ keepAlive: inout KeepAlive, now: NIODeadline) -> Action {
        if let pingSentAt = keepAlive.pingSentAt {
            return now - pingSentAt > self.settings.pingTimeout ? .close : .none
        }
        guard now - keepAlive.lastReadAt > self.settings.idlePingInterval else { return .none }
        keepAlive.pingSentAt = now
        return .sendPing
    }

    private static func anyExpired(_ exchanges: some Sequence<HTTP2Exchange>, _ now: NIODeadline) -> Bool {
        exchanges.contains { $0.request.deadline <= now }
    }

    private static func expire(_ queue: inout Deque<HTTP2Exchange>, now: NIODeadline, error: TransportError, into actions: inout DeadlineActions) {
        queue.removeAll { exchange in
            guard exchange.request.deadline <= now else { return false }
            actions.failures.append((exchange, error))
            return true
        }
    }

    private static func expire(_ streams: inout [Int32: HTTP2Exchange], now: NIODeadline, into actions: inout DeadlineActions) {
        for streamID in streams.keys.sorted() where streams[streamID]!.request.deadline <= now {
            actions.failures.append((streams.removeValue(forKey: streamID)!, TransportError(.deadlineExceeded, "no answer before the deadline")))
            actions.cancelledStreams.append(streamID)
        }
    }
}
