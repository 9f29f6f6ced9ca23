import NIOCore
import Testing

@testable import APNs

/// The HTTP/2 connection state machine, event by event, without sockets or nghttp2: what it admits, answers,
/// fails and hands back.
@Suite struct ConnectionStateMachineTests {
    typealias Machine = HTTP2ConnectionStateMachine

    private static let template = HeaderTemplate(method: "POST", authority: "localhost", headers: [])
    private let settings = TransportSettings(maximumAttempts: 2, idlePingInterval: .seconds(60), pingTimeout: .seconds(10))
    private let start = NIODeadline.uptimeNanoseconds(1_000_000_000_000)
    private let noError: UInt32 = 0x0
    private let internalError: UInt32 = 0x2
    private let cancel: UInt32 = 0x8

    private func exchanges(_ count: Int, deadline: TimeAmount = .seconds(15)) -> [HTTP2Exchange] {
        (0..<count).map { _ in
            HTTP2Exchange(template: Self.template, path: "/3/device/abcd", extraHeaders: [], body: [], deadline: self.start + deadline) { _, _ in }
        }
    }

    /// A machine whose session has started, holding `queued`.
    private func activeMachine(queued: [HTTP2Exchange] = [], previousError: TransportError? = nil) -> Machine {
        var machine = Machine(previousError: previousError, settings: self.settings)
        #expect(machine.enqueue(queued) == .none)
        #expect(machine.tlsHandshakeCompleted(negotiatedProtocol: "h2", now: self.start) == .startSession)
        return machine
    }

    /// Admits on stream ids 1, 3, 5… from `first` until the machine stops. - Returns: what it admitted, in order.
    private func admitAll(_ machine: inout Machine, from first: Int32 = 1) -> [HTTP2Exchange] {
        var admitted: [HTTP2Exchange] = []
        var streamID = first
        while let exchange = machine.admitNext(as: streamID) {
            admitted.append(exchange)
            streamID += 2
        }
        return admitted
    }

    // MARK: - Connecting

    @Test func exchangesWaitForTheConnectionThenGoOut() {
        let queued = self.exchanges(2)
        var machine = Machine(previousError: nil, settings: self.settings)
        #expect(machine.enqueue(queued) == .none)
        #expect(machine.admitNext(as: 1) == nil)
        #expect(machine.tlsHandshakeCompleted(negotiatedProtocol: "h2", now: self.start) == .startSession)
        #expect(machine.admitNext(as: 1) === queued[0])
        let more = self.exchanges(1)
        #expect(machine.enqueue(more) == .pump)
    }

    @Test func aServerThatDoesNotSpeakHTTP2IsClosedAndItsQueueHandedBack() {
        let queued = self.exchanges(1)
        var machine = Machine(previousError: nil, settings: self.settings)
        _ = machine.enqueue(queued)
        #expect(machine.tlsHandshakeCompleted(negotiatedProtocol: "http/1.1", now: self.start) == .close)
        #expect(machine.admitNext(as: 1) == nil)
        let error = TransportError(.connectionFailed, "the server did not agree to HTTP/2 (ALPN h2)")
        #expect(machine.connectionClosed(error: nil) == .finish(retry: queued, fail: [], error: error))
    }

    @Test func errorsBeforeTheSessionAreConnectionFailures() {
        let queued = self.exchanges(1)
        var machine = Machine(previousError: nil, settings: self.settings)
        _ = machine.enqueue(queued)
        #expect(machine.errorCaught("handshake failed") == .close)
        #expect(
            machine.connectionClosed(error: nil) == .finish(retry: queued, fail: [], error: TransportError(.connectionFailed, "handshake failed"))
        )
        #expect(machine.connectionClosed(error: nil) == .none)
        #expect(machine.enqueue(queued) == .retry(queued))

        var abandoned = Machine(previousError: nil, settings: self.settings)
        _ = abandoned.enqueue(queued)
        let refused = TransportError(.connectionFailed, "localhost:1: connection refused")
        #expect(abandoned.connectionClosed(error: refused) == .finish(retry: queued, fail: [], error: refused))
    }

    @Test func aConnectionClosedWhileBeingMadeIsNotUsed() {
        let queued = self.exchanges(1)
        var machine = Machine(previousError: nil, settings: self.settings)
        _ = machine.enqueue(queued)
        #expect(machine.closeRequested() == .close)
        #expect(machine.closeRequested() == .none)
        #expect(machine.tlsHandshakeCompleted(negotiatedProtocol: "h2", now: self.start) == .close)
        #expect(machine.admitNext(as: 1) == nil)
        #expect(
            machine.connectionClosed(error: nil) == .finish(retry: queued, fail: [], error: TransportError(.connectionLost, "the connection closed"))
        )
    }

    // MARK: - Stream admission

    @Test func oneStreamUntilTheServerRaisesItsLimitAfterTheFirstAuthenticatedRequest() {
        let queued = self.exchanges(4)
        var machine = self.activeMachine(queued: queued)
        // Before any SETTINGS: one stream.
        #expect(self.admitAll(&machine) == [queued[0]])
        // APNs's first SETTINGS, before a request authenticated: still one.
        machine.settingsReceived(maxConcurrentStreams: 1)
        #expect(machine.admitNext(as: 3) == nil)
        machine.responseEnded(streamID: 1)
        #expect(machine.streamClosed(1, errorCode: self.noError) == .succeed(queued[0]))
        #expect(self.admitAll(&machine, from: 3) == [queued[1]])
        // The first request authenticated: APNs raises the limit.
        machine.settingsReceived(maxConcurrentStreams: 1000)
        #expect(self.admitAll(&machine, from: 5) == [queued[2], queued[3]])
    }

    @Test func admissionStopsAtTheStreamLimit() {
        let queued = self.exchanges(4)
        var machine = self.activeMachine(queued: queued)
        machine.settingsReceived(maxConcurrentStreams: 2)
        #expect(self.admitAll(&machine) == [queued[0], queued[1]])
        machine.responseEnded(streamID: 1)
        #expect(machine.streamClosed(1, errorCode: self.noError) == .succeed(queued[0]))
        #expect(self.admitAll(&machine, from: 5) == [queued[2]])
        // The server lowers its limit (APNs does after an error): nothing goes out until streams are below it.
        machine.settingsReceived(maxConcurrentStreams: 1)
        machine.responseEnded(streamID: 3)
        #expect(machine.streamClosed(3, errorCode: self.noError) == .succeed(queued[1]))
        #expect(machine.admitNext(as: 7) == nil)
        machine.responseEnded(streamID: 5)
        #expect(machine.streamClosed(5, errorCode: self.noError) == .succeed(queued[2]))
        #expect(machine.admitNext(as: 7) === queued[3])
    }

    @Test func submissionFailures() {
        let queued = self.exchanges(4)
        var machine = self.activeMachine(queued: queued)
        machine.settingsReceived(maxConcurrentStreams: 10)
        #expect(machine.admitNext(as: 1) === queued[0])
        #expect(
            machine.submissionFailed(streamID: 1, .headersTooLarge)
                == .fail(queued[0], TransportError(.streamReset, "the request's headers are too large"))
        )
        // The id was not used: the next exchange gets it.
        #expect(machine.admitNext(as: 1) === queued[1])
        #expect(machine.admitNext(as: 3) === queued[2])
        // nghttp2 refuses new streams: the connection drains; the refused exchange goes first, in-flight ones stay.
        #expect(machine.submissionFailed(streamID: 3, .refusedBySession) == .drain(retry: [queued[2], queued[3]]))
        #expect(machine.admitNext(as: 3) == nil)
        machine.responseEnded(streamID: 1)
        #expect(machine.streamClosed(1, errorCode: self.noError) == .succeed(queued[1]))

        let waiting = self.exchanges(1)
        var spent = self.activeMachine(queued: waiting)
        #expect(spent.streamIDsExhausted() == .drain(retry: waiting))
        #expect(spent.streamIDsExhausted() == .none)
    }

    // MARK: - Streams ending

    @Test func aStreamIsAnsweredRetriedOrFailedByHowItEnds() {
        let queued = self.exchanges(3)
        var machine = self.activeMachine(queued: queued)
        machine.settingsReceived(maxConcurrentStreams: 10)
        _ = self.admitAll(&machine)
        // The server answered before reading the whole body, then reset the request half: the answer counts.
        machine.responseEnded(streamID: 1)
        #expect(machine.streamClosed(1, errorCode: self.cancel) == .succeed(queued[0]))
        // Refused: the server did not process it.
        #expect(machine.streamClosed(3, errorCode: Machine.refusedStream) == .retry([queued[1]]))
        #expect(
            machine.streamClosed(5, errorCode: self.internalError)
                == .fail(queued[2], TransportError(.streamReset, "the server reset the stream (HTTP/2 error 2)"))
        )
        #expect(machine.streamClosed(5, errorCode: self.noError) == .none)
    }

    // MARK: - GOAWAY

    @Test func goAwaySendsStreamsAboveTheLastStreamElsewhereAndAnswersThoseBelow() {
        let queued = self.exchanges(6)
        var machine = self.activeMachine(queued: queued)
        machine.settingsReceived(maxConcurrentStreams: 4)
        #expect(self.admitAll(&machine) == Array(queued[0..<4]))  // streams 1, 3, 5, 7
        // The queue and streams 5 and 7 never reached the server.
        let action = machine.goAwayReceived(lastStreamID: 3, errorCode: 0, debugData: #"{"reason":"Shutdown"}"#)
        #expect(action == .drain(retry: [queued[4], queued[5], queued[2], queued[3]]))
        // nghttp2 then closes 5 and 7 as refused: already handed back.
        #expect(machine.streamClosed(5, errorCode: Machine.refusedStream) == .none)
        #expect(machine.streamClosed(7, errorCode: Machine.refusedStream) == .none)
        // No new work.
        let late = self.exchanges(1)
        #expect(machine.enqueue(late) == .retry(late))
        #expect(machine.admitNext(as: 9) == nil)
        // Streams 1 and 3 are still answered; the connection closes once they are done.
        machine.responseEnded(streamID: 1)
        #expect(machine.streamClosed(1, errorCode: self.noError) == .succeed(queued[0]))
        #expect(machine.outputFlushed(sessionIsDone: false) == .none)
        machine.responseEnded(streamID: 3)
        #expect(machine.streamClosed(3, errorCode: self.noError) == .succeed(queued[1]))
        #expect(machine.outputFlushed(sessionIsDone: false) == .close)
        let error = TransportError(.connectionLost, #"GOAWAY (error 0) {"reason":"Shutdown"}"#)
        #expect(machine.connectionClosed(error: nil) == .finish(retry: [], fail: [], error: error))
    }

    @Test func aSecondGoAwayLowersTheLastStreamID() {
        let queued = self.exchanges(2)
        var machine = self.activeMachine(queued: queued)
        machine.settingsReceived(maxConcurrentStreams: 10)
        _ = self.admitAll(&machine)  // streams 1 and 3
        #expect(machine.goAwayReceived(lastStreamID: 3, errorCode: 0, debugData: "") == .drain(retry: []))
        #expect(machine.goAwayReceived(lastStreamID: 1, errorCode: 0, debugData: "null") == .retry([queued[1]]))
        #expect(machine.goAwayReceived(lastStreamID: 3, errorCode: 0, debugData: "") == .none)
        // The connection closes with stream 1 unanswered: it may have been processed, so it is sent again once.
        let action = machine.connectionClosed(error: nil)
        #expect(action == .finish(retry: [queued[0]], fail: [], error: TransportError(.connectionLost, "GOAWAY (error 0) ")))
    }

    // MARK: - The connection ending

    @Test func aDroppedConnectionSendsInFlightRequestsAgainUntilTheirAttemptsAreSpent() {
        let queued = self.exchanges(3)
        queued[1].lostInFlight = 1  // already lost with one connection; the maximum is 2
        var machine = self.activeMachine(queued: queued)
        machine.settingsReceived(maxConcurrentStreams: 2)
        #expect(self.admitAll(&machine) == [queued[0], queued[1]])
        #expect(machine.errorCaught("Connection reset by peer") == .close)
        let error = TransportError(.connectionLost, "Connection reset by peer")
        #expect(machine.connectionClosed(error: nil) == .finish(retry: [queued[0], queued[2]], fail: [queued[1]], error: error))
        #expect(queued.map(\.lostInFlight) == [1, 2, 0])
        #expect(machine.connectionClosed(error: nil) == .none)
    }

    @Test func answersStillCountWhileTheConnectionCloses() {
        let queued = self.exchanges(2)
        var machine = self.activeMachine(queued: queued)
        _ = self.admitAll(&machine)  // stream 1
        #expect(machine.closeRequested() == .close)
        let late = self.exchanges(1)
        #expect(machine.enqueue(late) == .none)
        #expect(machine.admitNext(as: 3) == nil)
        machine.responseEnded(streamID: 1)
        #expect(machine.streamClosed(1, errorCode: self.noError) == .succeed(queued[0]))
        #expect(
            machine.connectionClosed(error: nil)
                == .finish(retry: [queued[1], late[0]], fail: [], error: TransportError(.connectionLost, "the connection closed"))
        )
    }

    @Test func protocolErrorsAndAFinishedSessionCloseTheConnection() {
        var broken = self.activeMachine()
        let error = TransportError(.connectionLost, "HTTP/2 protocol error: Protocol error")
        #expect(broken.sessionFailed(error) == .close)
        #expect(broken.errorCaught("later") == .close)
        #expect(broken.connectionClosed(error: nil) == .finish(retry: [], fail: [], error: error))

        var finished = self.activeMachine()
        #expect(finished.outputFlushed(sessionIsDone: false) == .none)
        #expect(finished.outputFlushed(sessionIsDone: true) == .close)
        #expect(
            finished.connectionClosed(error: nil) == .finish(retry: [], fail: [], error: TransportError(.connectionLost, "the connection closed"))
        )
    }

    // MARK: - Deadlines and keep-alive

    @Test func requestsFailAtTheirDeadlineQueuedOrInFlight() {
        let early = self.exchanges(1, deadline: .seconds(1))
        let late = self.exchanges(2, deadline: .seconds(10))
        var machine = Machine(previousError: TransportError(.connectionFailed, "localhost:1: connection refused"), settings: self.settings)
        _ = machine.enqueue(early + late)
        // Waiting for a connection: the last connection's error says why.
        var expired = machine.expireDeadlines(now: self.start + .seconds(2))
        #expect(expired.failures.map(\.exchange) == early)
        #expect(
            expired.failures.map(\.error) == [
                TransportError(.deadlineExceeded, "deadline passed; last connection error: localhost:1: connection refused")
            ]
        )
        #expect(expired.cancelledStreams.isEmpty)
        #expect(machine.tlsHandshakeCompleted(negotiatedProtocol: "h2", now: self.start + .seconds(2)) == .startSession)
        #expect(machine.admitNext(as: 1) === late[0])
        #expect(machine.expireDeadlines(now: self.start + .seconds(9)).failures.isEmpty)
        // On a stream: the stream is reset; waiting for a stream: it never went out.
        expired = machine.expireDeadlines(now: self.start + .seconds(10))
        #expect(expired.failures.map(\.exchange) == [late[1], late[0]])
        #expect(
            expired.failures.map(\.error) == [
                TransportError(.deadlineExceeded, "deadline passed before sending"),
                TransportError(.deadlineExceeded, "no answer before the deadline"),
            ]
        )
        #expect(expired.cancelledStreams == [1])
        // The reset stream closes later: already reported.
        #expect(machine.streamClosed(1, errorCode: self.cancel) == .none)
    }

    @Test func anIdleConnectionIsPingedAndClosedWhenThePingGoesUnanswered() {
        var machine = self.activeMachine()
        #expect(machine.keepAliveTick(now: self.start + .seconds(59)) == .none)
        #expect(machine.keepAliveTick(now: self.start + .seconds(61)) == .sendPing)
        #expect(machine.keepAliveTick(now: self.start + .seconds(65)) == .none)
        // Anything from the server answers it.
        machine.bytesReceived(now: self.start + .seconds(66))
        #expect(machine.keepAliveTick(now: self.start + .seconds(100)) == .none)
        #expect(machine.keepAliveTick(now: self.start + .seconds(127)) == .sendPing)
        #expect(machine.keepAliveTick(now: self.start + .seconds(137)) == .none)
        #expect(machine.keepAliveTick(now: self.start + .seconds(138)) == .close)
        #expect(machine.keepAliveTick(now: self.start + .seconds(139)) == .none)
        #expect(machine.connectionClosed(error: nil) == .finish(retry: [], fail: [], error: TransportError(.connectionLost, "PING unanswered")))
    }
}

extension HTTP2ConnectionStateMachine.Action: Equatable {
    public static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.none, .none), (.startSession, .startSession), (.pump, .pump), (.sendPing, .sendPing), (.close, .close):
            true
        case (.succeed(let left), .succeed(let right)):
            left === right
        case (.fail(let left, let leftError), .fail(let right, let rightError)):
            left === right && leftError == rightError
        case (.retry(let left), .retry(let right)), (.drain(let left), .drain(let right)):
            left == right
        case (.finish(let leftRetry, let leftFail, let leftError), .finish(let rightRetry, let rightFail, let rightError)):
            leftRetry == rightRetry && leftFail == rightFail && leftError == rightError
        default:
            false
        }
    }
}

/// Exchanges compare by identity.
extension HTTP2Exchange: Equatable {
    public static func == (lhs: HTTP2Exchange, rhs: HTTP2Exchange) -> Bool {
        lhs === rhs
    }
}
