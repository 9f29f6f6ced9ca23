import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastServer
import LivecastStore
import LivecastTesting
import NIOCore
import NIOPosix
import PostgresNIO
import Testing

/// Bounds on how long a connection, a request and a statement may take: HTTP idle and read timeouts, PostgreSQL's
/// statement timeout, and the wait on the database.
@Suite struct TimeoutTests {
    private let activity = "/v1/apps/com.example.game/activities/act-1"

    @Test func anIdleKeepAliveConnectionIsClosedAfterTheIdleTimeout() async throws {
        // Three seconds: long enough that a loaded 2-core machine gets the request to the server before it.
        try await APIFixture.with("timeout_idle", testing: .live, settings: { $0.httpIdleTimeout = .seconds(3) }) { _, client in
            let port = try #require(client.port)
            let exchange = try await Self.exchange(
                port: port,
                send: ["GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n"]
            )
            #expect(exchange.received.hasPrefix("HTTP/1.1 200"), "\(exchange.received)")
            // Kept alive after the answer, then closed by the server once idle for three seconds (the bound leaves room
            // for a busy machine; without the timeout the connection stays open until the 30 s watchdog).
            let open = exchange.opened.duration(to: exchange.closed)
            let idle = exchange.lastReceived.duration(to: exchange.closed)
            #expect(open >= .milliseconds(2900), "closed \(open) after connecting")
            #expect(idle < .seconds(20), "closed \(idle) after the answer")
        }
    }

    @Test func aRequestWhoseBodyTricklesInIsCutOffAtTheReadTimeout() async throws {
        let settings: (inout LivecastApplication.Settings) -> Void = {
            $0.httpIdleTimeout = .seconds(30)
            $0.httpReadTimeout = .seconds(1)
        }
        try await APIFixture.with("timeout_read", testing: .live, settings: settings) { fixture, client in
            let port = try #require(client.port)
            let head =
                "PUT \(self.activity) HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(fixture.key(.backend))\r\n"
                + "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
            // A byte every 200 ms keeps the connection busy, so only the read timeout can end it.
            let exchange = try await Self.exchange(
                port: port,
                send: [head] + Array(repeating: " ", count: 50),
                pause: .milliseconds(200)
            )
            #expect(!exchange.received.hasPrefix("HTTP/1.1 2"), "\(exchange.received)")
            // Without the read timeout, the trickle lasts 10 s and the idle timeout closes 30 s after it.
            let took = exchange.opened.duration(to: exchange.closed)
            #expect(took < .seconds(15), "closed \(took) after the head")
            #expect(try await fixture.count("activities") == 0)
        }
    }

    @Test func aStatementOverTheStatementTimeoutIsA503NotAHang() async throws {
        let settings: (inout LivecastApplication.Settings) -> Void = {
            $0.statementTimeout = .seconds(1)
            $0.databaseWaitTimeout = .seconds(60)
        }
        try await APIFixture.with("timeout_statement", settings: settings) { fixture, client in
            try await self.register(fixture, client)
            let answer = try await self.updateWhileTheActivityIsLocked(fixture, client)
            #expect(answer.response.status == .serviceUnavailable, "\(answer.response.text)")
            #expect(answer.response.errorCode == "database_unavailable")
            #expect(answer.response.headers[.retryAfter] != nil)
            // Two statements time out (the shared transaction's, then the update's alone): 2 s on an idle machine, 11 s
            // seen on a loaded one. Without the statement timeout, the wait timeout answers after 60 s.
            #expect(answer.took < .seconds(30), "answered after \(answer.took)")
            #expect(try await fixture.count("updates") == 0)
        }
    }

    @Test func aRequestWaitingOnTheDatabaseTooLongIsA503() async throws {
        let settings: (inout LivecastApplication.Settings) -> Void = {
            $0.statementTimeout = nil
            $0.databaseWaitTimeout = .seconds(2)
        }
        try await APIFixture.with("timeout_wait", settings: settings) { fixture, client in
            // Registered directly: on a busy machine, even this request could outlast the short wait.
            try await fixture.client.query(
                """
                INSERT INTO activities (app_id, activity_key, attributes_type, state)
                VALUES (\(fixture.store.appID), 'act-1', 'GameAttributes', 'active')
                """
            )
            let answer = try await self.updateWhileTheActivityIsLocked(fixture, client)
            #expect(answer.response.status == .serviceUnavailable, "\(answer.response.text)")
            #expect(answer.response.errorCode == "database_unavailable")
            #expect(answer.response.headers[.retryAfter] != nil)
            // 2 s on an idle machine; without the wait timeout, no answer until the lock is released after it.
            #expect(answer.took < .seconds(30), "answered after \(answer.took)")
        }
    }

    private func register(_ fixture: APIFixture, _ client: any TestClientProtocol) async throws {
        let registered = try await client.send(
            .put,
            self.activity,
            key: fixture.key(.backend),
            body: #"{"attributesType": "GameAttributes", "pushToken": "a1a1"}"#
        )
        #expect(registered.status == .created, "\(registered.text)")
    }

    /// Sends an update while another transaction holds the activity's row lock, until the answer comes.
    private func updateWhileTheActivityIsLocked(
        _ fixture: APIFixture,
        _ client: any TestClientProtocol
    ) async throws -> (response: TestResponse, took: Duration) {
        let key = fixture.key(.backend)
        let activity = self.activity
        return try await fixture.client.withTransaction(logger: fixture.store.logger) { connection in
            try await connection.query("SELECT id FROM activities WHERE activity_key = 'act-1' FOR UPDATE", logger: fixture.store.logger)
            let start = ContinuousClock.now
            let response = try await client.send(.post, "\(activity)/updates", key: key, body: #"{"contentState": {"home": 1}}"#)
            return (response, start.duration(to: .now))
        }
    }

    /// What a raw connection saw: the bytes the server sent, when the first piece was written, when the last bytes
    /// arrived, and when the server closed the connection.
    private struct Exchange {
        let received: String
        let opened: ContinuousClock.Instant
        let lastReceived: ContinuousClock.Instant
        let closed: ContinuousClock.Instant
    }

    /// Connects, writes each piece (pausing between them), and reads until the server closes the connection (or 30 s
    /// pass).
    private static func exchange(port: Int, send pieces: [String], pause: Duration = .zero) async throws -> Exchange {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
        }
        return try await channel.executeThenClose { inbound, outbound in
            let opened = ContinuousClock.now
            let reader = Task {
                var received = ""
                var lastReceived = opened
                do {
                    for try await chunk in inbound {
                        received += String(buffer: chunk)
                        lastReceived = .now
                    }
                } catch {
                    // A reset (the server closed with our bytes unread) is a close too.
                }
                return (received, lastReceived, ContinuousClock.now)
            }
            // Never left waiting: a connection still open after 30 s ends the read (and fails the test).
            let watchdog = Task {
                try await Task.sleep(for: .seconds(30))
                reader.cancel()
            }
            defer { watchdog.cancel() }
            for piece in pieces {
                do {
                    try await outbound.write(ByteBuffer(string: piece))
                } catch {
                    break  // closed by the server
                }
                if pause > .zero { try await Task.sleep(for: pause) }
            }
            let (received, lastReceived, closed) = await reader.value
            return Exchange(received: received, opened: opened, lastReceived: lastReceived, closed: closed)
        }
    }
}
