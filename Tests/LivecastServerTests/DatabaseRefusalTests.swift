import Hummingbird
import HummingbirdTesting
import LivecastCore
import LivecastTesting
import PostgresNIO
import Testing

@testable import LivecastServer

/// The error middleware's last line of defence: a value PostgreSQL refuses (SQLSTATE class 22, or 54000 for an
/// index row over its size) is a `422 invalid`, never a 500, should a route ever let one through its checks.
@Suite struct DatabaseRefusalTests {
    @Test func valuesPostgreSQLRefusesAre422AndOtherFailuresStay500() async throws {
        try await StoreFixture.with("db_refusals") { store in
            let router = Router(context: APIRequestContext.self)
            router.add(middleware: APIErrorMiddleware())
            let queries: [String: @Sendable () async throws -> Void] = [
                // 22021: a NUL in text, as a JSON body's "\u0000" would bind it.
                "nul": { try await store.client.query("SELECT \("a\u{0}b")::text", logger: store.logger) },
                // 22003: a number past an integer column.
                "range": { try await store.client.query("SELECT \(Int64(99_999_999_999))::int4", logger: store.logger) },
                // 54000: a random 6,000-digit token is over a btree entry's size, inside a transaction.
                "index": {
                    let token = (0..<3000).map { _ in String(UInt8.random(in: 16...255), radix: 16) }.joined()
                    _ = try await store.client.withTransaction(logger: store.logger) { connection in
                        try await connection.query(
                            "INSERT INTO push_to_start_tokens (app_id, device_id, attributes_type, token) VALUES (\(store.appID), 'd', 'T', \(token))",
                            logger: store.logger
                        )
                    }
                },
                // 42P01: not the client's fault.
                "bug": { try await store.client.query("SELECT * FROM no_such_table", logger: store.logger) },
            ]
            for (name, query) in queries {
                router.get("/\(name)") { _, _ -> HTTPResponse.Status in
                    try await query()
                    return .ok
                }
            }
            try await Application(router: router).test(.router) { client in
                for name in ["nul", "range", "index"] {
                    let response = try await client.execute(uri: "/\(name)", method: .get)
                    #expect(response.status == .unprocessableContent, "\(name): \(String(buffer: response.body))")
                    #expect(response.errorCode == "invalid", "\(name)")
                    #expect(response.json["error"]?["message"]?.stringValue?.isEmpty == false)
                }
                let bug = try await client.execute(uri: "/bug", method: .get)
                #expect(bug.status == .internalServerError)
                #expect(bug.errorCode == "internal_error")
            }
            let rows = try await store.client.query("SELECT count(*)::int FROM push_to_start_tokens", logger: store.logger)
            for try await count in rows.decode(Int.self) { #expect(count == 0) }
        }
    }
}
