import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

@testable import LivecastServer

/// A console session's live streams (#66 §4): one ends as soon as its session signs out or expires, and a session has
/// at most ``ConsoleSessions/streamsPerSession`` open at once. No dispatcher runs in these tests: an update stays
/// pending, and its progress stream would go on.
@Suite struct ConsoleStreamTests {
    @Test(.timeLimit(.minutes(3))) func aLiveStreamEndsWhenItsSessionSignsOut() async throws {
        try await APIFixture.with("console_stream_sign_out") { fixture, client in
            let updateID = try await fixture.pendingUpdate(client)
            var user = ConsoleUser(client: client)
            #expect(try await user.signIn(key: fixture.key(.operator)).status == .seeOther)
            _ = try await user.get("/console")
            let watcher = user
            let stream = Task {
                var watcher = watcher
                return try await watcher.get("/console/updates/\(updateID)/progress").text
            }
            try await eventually("the stream open") { try await fixture.count("console_streams") == 1 }
            #expect(try await user.post("/console/logout").status == .seeOther)
            let text = try await stream.value
            #expect(text.hasSuffix(#"event: ended\#ndata: {"reason":"signed_out"}\#n\#n"#), "\(text.suffix(200))")
            #expect(try await fixture.count("console_streams") == 0)
        }
    }

    @Test(.timeLimit(.minutes(3))) func aLiveStreamEndsWhenItsSessionExpiresOrGoesIdle() async throws {
        try await APIFixture.with("console_stream_expiry") { fixture, client in
            let updateID = try await fixture.pendingUpdate(client)
            for expiry in ["expires_at = now() - interval '1 second'", "last_used_at = now() - interval '31 minutes'"] {
                var user = ConsoleUser(client: client)
                #expect(try await user.signIn(key: fixture.key(.operator)).status == .seeOther)
                let watcher = user
                let stream = Task {
                    var watcher = watcher
                    return try await watcher.get("/console/updates/\(updateID)/progress").text
                }
                try await eventually("the stream open") { try await fixture.count("console_streams") == 1 }
                try await fixture.client.query(PostgresQuery(unsafeSQL: "UPDATE console_sessions SET \(expiry)"))
                let text = try await stream.value
                #expect(text.hasSuffix(#"event: ended\#ndata: {"reason":"expired"}\#n\#n"#), "\(expiry): \(text.suffix(200))")
                try await eventually("the stream's place given back") { try await fixture.count("console_streams") == 0 }
                try await fixture.client.query("DELETE FROM console_sessions")
            }
        }
    }

    @Test(.timeLimit(.minutes(3))) func oneSessionHasAtMostFourStreamsOpen() async throws {
        try await APIFixture.with("console_stream_limit") { fixture, client in
            let updateID = try await fixture.pendingUpdate(client)
            var user = ConsoleUser(client: client)
            #expect(try await user.signIn(key: fixture.key(.operator)).status == .seeOther)
            let watcher = user
            let streams = (0..<ConsoleSessions.streamsPerSession).map { _ in
                Task {
                    var watcher = watcher
                    return try await watcher.get("/console/updates/\(updateID)/progress").text
                }
            }
            try await eventually("every stream open") { try await fixture.count("console_streams") == ConsoleSessions.streamsPerSession }
            let refused = try await user.get("/console/updates/\(updateID)/progress")
            #expect(refused.status == .tooManyRequests, "\(refused.status)")
            #expect(refused.text.contains("too_many_streams"))

            // Another session of the same key is not held back by this one's streams.
            var other = ConsoleUser(client: client)
            #expect(try await other.signIn(key: fixture.key(.operator)).status == .seeOther)
            let otherWatcher = other
            let otherStream = Task {
                var watcher = otherWatcher
                return try await watcher.get("/console/updates/\(updateID)/progress").text
            }
            try await eventually("the other session's stream open") {
                try await fixture.count("console_streams") == ConsoleSessions.streamsPerSession + 1
            }

            // A stream that ends gives its place back: the update done, every stream of it ends.
            try await fixture.client.query("UPDATE updates SET status = 'sent' WHERE id = \(Int64(updateID))")
            for stream in streams + [otherStream] {
                #expect(try await stream.value.contains(#""done":true"#))
            }
            try await eventually("every place given back") { try await fixture.count("console_streams") == 0 }
            let again = try await user.get("/console/updates/\(updateID)/progress")
            #expect(again.status == .ok && again.text.contains(#""done":true"#), "\(again.status)")
        }
    }
}
