import Foundation
import Hummingbird
import HummingbirdTesting
import LivecastStore
import LivecastTesting
import Logging
import Testing

@testable import LivecastServer

/// A route's store logs to its request's logger, so what PostgreSQL's client logs for the request's statements
/// carries the request's id (`hb.request.id`), as the request's own lines do.
@Suite struct RequestLoggingTests {
    @Test func storeLinesCarryTheRequestID() async throws {
        let lines = LogLines()
        let logger = lines.logger(label: "test.api", level: .trace)
        try await APIFixture.with("request_logging", testing: .live, logger: logger) { fixture, client in
            let registered = try await client.send(
                .put,
                "/v1/apps/com.example.game/activities/logged-1",
                key: fixture.key(.backend),
                body: #"{"attributesType": "GameAttributes", "pushToken": "a1a1"}"#
            )
            #expect(registered.status == .created)
        }
        let requestIDs = Set(lines.written.compactMap { Self.requestID(in: $0) })
        #expect(requestIDs.count == 1)
        let statementLines = lines.written.filter { $0.contains("[PostgresNIO]") && Self.requestID(in: $0) != nil }
        #expect(!statementLines.isEmpty, "no PostgresNIO line carries the request id")
    }

    /// The `hb.request.id` a line carries.
    private static func requestID(in line: String) -> Substring? {
        guard let start = line.range(of: "hb.request.id=")?.upperBound else { return nil }
        return line[start...].prefix { !$0.isWhitespace }
    }
}
