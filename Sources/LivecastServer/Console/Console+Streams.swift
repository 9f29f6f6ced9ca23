import Hummingbird
import LivecastStore

/// One Server-Sent Event of a console stream.
struct ConsoleEvent: Sendable {
    var name: String
    /// The event's data: one line of JSON.
    var data: String
    /// Whether the stream ends after it.
    var isLast: Bool
}

extension Console {
    /// A live view as Server-Sent Events, in one of the session's ``ConsoleSessions/streamsPerSession`` places
    /// (counted in PostgreSQL, across every instance). Every `interval` it checks that its session is still live and
    /// writes `next`'s event. It ends after the event that says it is the last, when the browser goes away, or as soon
    /// as its session ends: signed out, expired or idle, or its key revoked (`event: ended`, with
    /// `{"reason": "signed_out" | "expired" | "revoked"}`).
    /// - Throws: ``APIError`` `429 too_many_streams` when the session has its most open.
    func eventStream(
        of session: ConsoleSessions.Session,
        every interval: Duration = .milliseconds(500),
        _ next: @escaping @Sendable () async throws -> ConsoleEvent
    ) async throws -> Response {
        let sessions = self.sessions
        guard let stream = try await self.databaseWatch.guarding({ try await sessions.openStream(of: session) }) else {
            throw APIError(
                .tooManyRequests,
                code: "too_many_streams",
                "this session has \(ConsoleSessions.streamsPerSession) live views open already; close one and reload"
            )
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
            body: ResponseBody { writer in
                do {
                    while !Task.isCancelled {
                        if let ending = try await sessions.checkStream(stream, of: session) {
                            try await writer.write(Self.event(ConsoleEvent(name: "ended", data: #"{"reason":"\#(ending.rawValue)"}"#, isLast: true)))
                            break
                        }
                        let event = try await next()
                        try await writer.write(Self.event(event))
                        if event.isLast { break }
                        try await Task.sleep(for: interval)
                    }
                } catch {
                    try? await sessions.closeStream(stream)
                    throw error
                }
                try? await sessions.closeStream(stream)
                try await writer.finish(nil)
            }
        )
    }

    private static func event(_ event: ConsoleEvent) -> ByteBuffer {
        ByteBuffer(string: "event: \(event.name)\ndata: \(event.data)\n\n")
    }
}
