import CNGHTTP2
import DequeModule
import NIOCore
import NIOSSL
import NIOTLS

/// One HTTP/2 connection to APNs, framed by libnghttp2, on one event loop.
///
/// Requests arrive in batches from the pool; the handler submits as many as the server's
/// `MAX_CONCURRENT_STREAMS` allows (one until APNs has seen a valid token), serialises every frame nghttp2 has
/// ready into one buffer and flushes once per batch or read burst. No task or promise per request.
///
/// It survives early answers and resets: a stream's response counts once its END_STREAM arrives, whatever
/// happens to the request half afterwards. Streams refused by the server, or above a GOAWAY's last stream id, go
/// back to the pool to be sent on another connection; so does everything unanswered when the connection drops.
final class HTTP2ConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// What the handler tells its pool.
    struct Events {
        /// The connection stopped taking new work (GOAWAY); `queued` never reached the server.
        var draining: (HTTP2ConnectionHandler, [HTTP2Exchange]) -> Void
        /// The connection closed; `unfinished` are unanswered (sent or not), `error` says why.
        var closed: (HTTP2ConnectionHandler, [HTTP2Exchange], TransportError) -> Void
        /// An exchange the server refused, to send again elsewhere.
        var retry: (HTTP2Exchange) -> Void
    }

    private enum State {
        case connecting
        case open
        case draining
        case closed
    }

    /// Sent as `apns-*` etc.: the only response headers kept.
    private static let keptResponseHeaderPrefixes = [Array("apns-".utf8), Array("retry-after".utf8), Array("content-type".utf8)]
    private static let maximumResponseBody = 64 * 1024
    private static let nameValueCapacity = 32
    private static let scratchCapacity = 16 * 1024

    let eventLoop: any EventLoop
    private let events: Events
    private let tokens: ProviderTokens
    private let settings: TransportSettings
    private var state = State.connecting
    private var context: ChannelHandlerContext?
    private var session: OpaquePointer?
    private var queue = Deque<HTTP2Exchange>()
    private var streams: [Int32: HTTP2Exchange] = [:]
    /// The stream whose header block is being read.
    private var headerStream: (id: Int32, exchange: HTTP2Exchange)?
    private var token: ProviderTokens.Token?
    private var authorizationValue = ""
    private var goAwayLastStreamID: Int32?
    private var lastError: TransportError?
    private var lastReadAt = NIODeadline.now()
    private var pingSentAt: NIODeadline?
    private var sweepTask: RepeatedTask?
    private let nameValues = UnsafeMutableBufferPointer<nghttp2_nv>.allocate(capacity: HTTP2ConnectionHandler.nameValueCapacity)
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: HTTP2ConnectionHandler.scratchCapacity, alignment: 1)

    /// - Parameter previousError: Why the connection this one replaces ended, reported if requests time out
    ///   before this one connects.
    init(eventLoop: any EventLoop, previousError: TransportError?, tokens: ProviderTokens, settings: TransportSettings, events: Events) {
        self.eventLoop = eventLoop
        self.lastError = previousError
        self.tokens = tokens
        self.settings = settings
        self.events = events
    }

    deinit {
        self.nameValues.deallocate()
        self.scratch.deallocate()
        if let session { nghttp2_session_del(session) }
    }

    // MARK: - Work from the pool (on the event loop)

    /// Starts the deadline and keep-alive sweep. Call once, on the event loop.
    func start() {
        let handler = NIOLoopBound(self, eventLoop: self.eventLoop)
        self.sweepTask = self.eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(100), delay: .milliseconds(100)) { _ in
            handler.value.sweep()
        }
    }

    /// Takes exchanges to send; they wait while the connection is being made.
    func enqueue(_ exchanges: [HTTP2Exchange]) {
        switch self.state {
        case .connecting, .open:
            self.queue.append(contentsOf: exchanges)
            self.pump()
        case .draining, .closed:
            for exchange in exchanges { self.events.retry(exchange) }
        }
    }

    /// Gives up on a connection that could not be made.
    func abandon(_ error: TransportError) {
        self.lastError = error
        self.finish()
    }

    /// Closes the connection; what is unanswered goes back to the pool.
    func close() {
        if let context { context.close(promise: nil) } else { self.finish() }
    }

    // MARK: - Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted(let negotiated) = event {
            guard negotiated == "h2" else {
                self.lastError = TransportError(.connectionFailed, "the server did not agree to HTTP/2 (ALPN h2)")
                return context.close(promise: nil)
            }
            self.startSession()
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let session else { return }
        self.lastReadAt = .now()
        self.pingSentAt = nil
        let buffer = self.unwrapInboundIn(data)
        let consumed = buffer.withUnsafeReadableBytes { bytes in
            nghttp2_session_mem_recv(session, bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count)
        }
        if consumed < 0 {
            self.lastError = TransportError(.connectionLost, "HTTP/2 protocol error: \(String(cString: nghttp2_strerror(Int32(consumed))))")
            context.close(promise: nil)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        self.pump()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.finish()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if self.lastError == nil {
            let code: TransportError.Code = self.state == .connecting ? .connectionFailed : .connectionLost
            self.lastError = TransportError(code, String(describing: error))
        }
        context.close(promise: nil)
    }

    // MARK: - Sending

    private func startSession() {
        // Closed while the connection was being made (the pool shut down): do not start using it.
        guard self.state == .connecting else {
            self.context?.close(promise: nil)
            return
        }
        var option: OpaquePointer?
        nghttp2_option_new(&option)
        // Assume one stream until the server's SETTINGS say more: APNs allows one before a valid token.
        nghttp2_option_set_peer_max_concurrent_streams(option, 1)
        let callbacks = NGHTTP2Callbacks.make()
        var session: OpaquePointer?
        nghttp2_session_client_new2(&session, callbacks, Unmanaged.passUnretained(self).toOpaque(), option)
        nghttp2_session_callbacks_del(callbacks)
        nghttp2_option_del(option)
        self.session = session
        var entries = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: 1 << 20),
        ]
        nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &entries, entries.count)
        nghttp2_session_set_local_window_size(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, 1 << 24)
        self.state = .open
        self.lastReadAt = .now()
        self.pump()
    }

    /// Submits what the stream limit allows, then writes everything nghttp2 has ready in one flush.
    private func pump() {
        guard let session, self.state == .open || self.state == .draining else { return }
        if self.state == .open, !self.queue.isEmpty {
            self.refreshToken()
            let limit = Int(nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS))
            while self.streams.count < limit, let exchange = self.queue.popFirst() {
                self.submit(exchange, session: session)
            }
        }
        self.flushOutput(session)
        if self.state == .draining, self.streams.isEmpty {
            self.context?.close(promise: nil)
        }
    }

    private func refreshToken() {
        let current = self.tokens.token()
        if current != self.token { self.use(current) }
    }

    private func use(_ token: ProviderTokens.Token) {
        self.token = token
        self.authorizationValue = "bearer \(token.jwt)"
    }

    private func submit(_ exchange: HTTP2Exchange, session: OpaquePointer) {
        var count = 0
        var used = 0
        var fits = true
        func add(_ nameValue: nghttp2_nv) {
            guard count < Self.nameValueCapacity else { return fits = false }
            self.nameValues[count] = nameValue
            count += 1
        }
        func copy(_ text: String) -> (UnsafeMutablePointer<UInt8>?, Int) {
            let length = text.utf8.count
            guard used + length <= Self.scratchCapacity else {
                fits = false
                return (nil, 0)
            }
            let start = self.scratch.baseAddress!.advanced(by: used).assumingMemoryBound(to: UInt8.self)
            _ = UnsafeMutableBufferPointer(start: start, count: length).initialize(from: text.utf8)
            used += length
            return (start, length)
        }
        // Copied by nghttp2 at submission (no NO_COPY flags), so the scratch space is free again afterwards.
        func addCopy(_ name: String, _ value: String) {
            let (namePointer, nameLength) = copy(name)
            let (valuePointer, valueLength) = copy(value)
            add(nghttp2_nv(name: namePointer, value: valuePointer, namelen: nameLength, valuelen: valueLength, flags: 0))
        }
        for nameValue in exchange.template.pseudoHeaders { add(nameValue) }
        addCopy(":path", exchange.path)
        for nameValue in exchange.template.headers { add(nameValue) }
        addCopy("authorization", self.authorizationValue)
        for (name, value) in exchange.extraHeaders { addCopy(name, value) }
        guard fits else {
            return exchange.complete(.failure(TransportError(.streamReset, "the request's headers are too large")))
        }
        var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: NGHTTP2Callbacks.readBody)
        let streamID =
            exchange.body.isEmpty
            ? nghttp2_submit_request(session, nil, self.nameValues.baseAddress, count, nil, nil)
            : nghttp2_submit_request(session, nil, self.nameValues.baseAddress, count, &provider, nil)
        guard streamID > 0 else {
            // Stream ids are spent (or the session refuses): this connection is done; send it elsewhere.
            self.events.retry(exchange)
            return self.startDraining()
        }
        exchange.attempts += 1
        exchange.sentAt = .now()
        self.streams[streamID] = exchange
    }

    private func flushOutput(_ session: OpaquePointer) {
        guard let context else { return }
        var output: ByteBuffer?
        while true {
            var data: UnsafePointer<UInt8>?
            let length = nghttp2_session_mem_send(session, &data)
            if length < 0 {
                self.lastError = TransportError(.connectionLost, "HTTP/2 error: \(String(cString: nghttp2_strerror(Int32(length))))")
                context.close(promise: nil)
                return
            }
            guard length > 0, let data else { break }
            if output == nil { output = context.channel.allocator.buffer(capacity: max(length, 16 * 1024)) }
            output!.writeBytes(UnsafeRawBufferPointer(start: data, count: length))
        }
        if let output {
            context.writeAndFlush(self.wrapOutboundOut(output), promise: nil)
        }
        if nghttp2_session_want_read(session) == 0, nghttp2_session_want_write(session) == 0 {
            context.close(promise: nil)
        }
    }

    private func startDraining() {
        guard self.state == .open || self.state == .connecting else { return }
        self.state = .draining
        let queued = Array(self.queue)
        self.queue.removeAll()
        self.events.draining(self, queued)
    }

    // MARK: - nghttp2 callbacks

    func receiveHeader(streamID: Int32, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        // A header block arrives header by header: look its stream up once.
        if self.headerStream?.id != streamID {
            guard let exchange = self.streams[streamID] else { return }
            self.headerStream = (streamID, exchange)
        }
        let exchange = self.headerStream!.exchange
        if name.first == UInt8(ascii: ":") {
            if name.elementsEqual(":status".utf8) {
                exchange.status = value.reduce(0) { $0 * 10 + Int($1 &- UInt8(ascii: "0")) }
            }
        } else if Self.keptResponseHeaderPrefixes.contains(where: { name.starts(with: $0) }) {
            exchange.responseHeaders.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
    }

    func receiveData(streamID: Int32, bytes: UnsafeBufferPointer<UInt8>) {
        guard let exchange = self.streams[streamID], exchange.responseBody.count < Self.maximumResponseBody else { return }
        exchange.responseBody.append(contentsOf: bytes.prefix(Self.maximumResponseBody - exchange.responseBody.count))
    }

    func receiveEndOfResponse(streamID: Int32) {
        self.streams[streamID]?.isResponseComplete = true
    }

    func receiveGoAway(lastStreamID: Int32, errorCode: UInt32, debugData: String) {
        self.goAwayLastStreamID = min(self.goAwayLastStreamID ?? .max, lastStreamID)
        self.lastError = TransportError(.connectionLost, "GOAWAY (error \(errorCode)) \(debugData)")
        self.startDraining()
    }

    func closeStream(_ streamID: Int32, errorCode: UInt32) {
        if self.headerStream?.id == streamID { self.headerStream = nil }
        guard let exchange = self.streams.removeValue(forKey: streamID) else { return }
        if exchange.isResponseComplete {
            return self.respond(exchange)
        }
        // Refused, or above GOAWAY's last stream id: the server did not process it, so it is safe to send again.
        if errorCode == NGHTTP2_REFUSED_STREAM.rawValue || streamID > (self.goAwayLastStreamID ?? .max) {
            exchange.resetForRetry()
            return self.events.retry(exchange)
        }
        exchange.complete(.failure(TransportError(.streamReset, "the server reset the stream (HTTP/2 error \(errorCode))")))
    }

    func readBody(streamID: Int32, into buffer: UnsafeMutableBufferPointer<UInt8>) -> (Int, Bool) {
        guard let exchange = self.streams[streamID] else { return (0, true) }
        let count = min(buffer.count, exchange.body.count - exchange.bodyOffset)
        exchange.body.withUnsafeBufferPointer { body in
            _ = buffer.initialize(from: body[exchange.bodyOffset..<exchange.bodyOffset + count])
        }
        exchange.bodyOffset += count
        return (count, exchange.bodyOffset == exchange.body.count)
    }

    /// A complete response: retried once with a newer token after `ExpiredProviderToken`, else reported.
    private func respond(_ exchange: HTTP2Exchange) {
        if exchange.status == 403, !exchange.wasReauthenticated, let token = self.token,
            exchange.responseBody.count < 256,
            String(decoding: exchange.responseBody, as: UTF8.self).contains("\"ExpiredProviderToken\""),
            let newer = self.tokens.replace(rejected: token)
        {
            self.use(newer)
            exchange.wasReauthenticated = true
            exchange.resetForRetry()
            self.queue.prepend(exchange)
            return
        }
        exchange.completeWithResponse()
    }

    // MARK: - Deadlines, keep-alive and the end

    private func sweep() {
        let now = NIODeadline.now()
        if self.queue.contains(where: { $0.deadline <= now }) {
            let message = self.lastError.map { "deadline passed; last connection error: \($0.message)" } ?? "deadline passed before sending"
            self.queue.removeAll { exchange in
                guard exchange.deadline <= now else { return false }
                exchange.complete(.failure(TransportError(.deadlineExceeded, message)))
                return true
            }
        }
        guard let session else { return }
        for (streamID, exchange) in self.streams where exchange.deadline <= now {
            self.streams[streamID] = nil
            nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, NGHTTP2_CANCEL.rawValue)
            exchange.complete(.failure(TransportError(.deadlineExceeded, "no answer before the deadline")))
        }
        if let pingSentAt {
            if now - pingSentAt > self.settings.pingTimeout {
                self.lastError = TransportError(.connectionLost, "PING unanswered")
                self.context?.close(promise: nil)
                return
            }
        } else if now - self.lastReadAt > self.settings.idlePingInterval {
            nghttp2_submit_ping(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil)
            self.pingSentAt = now
        }
        self.pump()
    }

    /// Hands everything unanswered back to the pool, once.
    private func finish() {
        guard self.state != .closed else { return }
        self.state = .closed
        self.sweepTask?.cancel()
        self.sweepTask = nil
        var unfinished = Array(self.streams.values)
        for exchange in unfinished { exchange.lostInFlight += 1 }
        unfinished.append(contentsOf: self.queue)
        self.streams.removeAll()
        self.headerStream = nil
        self.queue.removeAll()
        if let session {
            nghttp2_session_del(session)
            self.session = nil
        }
        self.events.closed(self, unfinished, self.lastError ?? TransportError(.connectionLost, "the connection closed"))
    }
}

/// How the transport behaves; see ``APNsClient/Configuration``.
struct TransportSettings: Sendable {
    /// How often one request may be lost with its connection (sent, unanswered) before it fails.
    var maximumAttempts: Int
    /// A PING goes out after this long without a frame from the server.
    var idlePingInterval: TimeAmount
    /// The connection closes when a PING is unanswered for this long.
    var pingTimeout: TimeAmount
}
