import LivecastCore
import Testing

@testable import LivecastStore

/// The outbox's pure rules (``OutboxRules``), without PostgreSQL: the statements that apply them are tested in the
/// Outbox… suites.
@Suite struct OutboxRulesTests {
    @Test func anUpdateComesAfterItsTargetsLastTimestamp() throws {
        #expect(try OutboxRules.timestamp(requested: nil, last: nil, now: 100) == (100, false), "a first update: the clock")
        #expect(try OutboxRules.timestamp(requested: 90, last: nil, now: 100) == (90, false), "the client's own")
        #expect(try OutboxRules.timestamp(requested: nil, last: 99, now: 100) == (100, false))
        #expect(try OutboxRules.timestamp(requested: nil, last: 100, now: 100) == (101, true), "same second: coalesced")
        #expect(try OutboxRules.timestamp(requested: nil, last: 105, now: 100) == (106, true), "a clock behind the last")
        #expect(try OutboxRules.timestamp(requested: 100, last: 100, now: 100) == (101, true), "an explicit same second")
    }

    @Test func anExplicitTimestampOlderThanTheLastIsRefused() {
        #expect {
            try OutboxRules.timestamp(requested: 99, last: 100, now: 120)
        } throws: { error in
            (error as? StoreError)?.code == .staleTimestamp && (error as? StoreError)?.field == "timestamp"
        }
    }

    @Test func thePriorityIsTenForAnAlertOrWhenAskedElseFive() throws {
        #expect(try OutboxRules.priority(requested: nil, hasAlert: false) == 5)
        #expect(try OutboxRules.priority(requested: nil, hasAlert: true) == 10)
        #expect(try OutboxRules.priority(requested: 5, hasAlert: true) == 5, "asked for, even with an alert")
        #expect(try OutboxRules.priority(requested: 10, hasAlert: false) == 10)
        for refused in [0, 1, 6, 11] {
            #expect(throws: StoreError.self) { try OutboxRules.priority(requested: refused, hasAlert: false) }
        }
    }

    @Test func anEndsDismissalDateIsClampedToFourHours() {
        #expect(OutboxRules.dismissalDate(requested: nil, timestamp: 1_000) == (nil, false))
        #expect(OutboxRules.dismissalDate(requested: 1_000 + 4 * 3600, timestamp: 1_000) == (1_000 + 4 * 3600, false))
        #expect(OutboxRules.dismissalDate(requested: 1_000 + 4 * 3600 + 1, timestamp: 1_000) == (1_000 + 4 * 3600, true))
    }

    @Test func aPayloadBreakingActivityKitsRulesIsRefusedNamingTheRequestsField() throws {
        var update = LiveActivityPayload(event: .update, timestamp: 1_000, contentState: try RawJSON(validating: #"{"home":1}"#))
        #expect(try OutboxRules.encode(update, for: .device).count > 0)

        update.staleDate = 1_000
        #expect {
            try OutboxRules.encode(update, for: .device)
        } throws: { error in
            (error as? StoreError)?.code == .invalid && (error as? StoreError)?.field == "staleDate"
        }

        update.staleDate = nil
        update.contentState = try RawJSON(validating: #"{"text":"\#(String(repeating: "x", count: 5_000))"}"#)
        #expect {
            try OutboxRules.encode(update, for: .device)
        } throws: { error in
            (error as? StoreError)?.code == .payloadTooLarge && (error as? StoreError)?.field == "contentState"
        }
    }

    @Test func aPayloadKeyIsNamedAsTheAPINamesIt() {
        #expect(OutboxRules.requestField("stale-date") == "staleDate")
        #expect(OutboxRules.requestField("input-push-channel") == "inputPushChannel")
        #expect(OutboxRules.requestField("alert") == "alert")
    }
}
