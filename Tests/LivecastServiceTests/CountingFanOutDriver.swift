import LivecastStore
import Synchronization

/// The outbox's fan-out contract with every call a worker makes of it counted: the test that the contract is narrow.
final class CountingFanOutDriver: FanOutDriver {
    private let base: Outbox
    private let calls = Mutex<[String]>([])

    init(_ base: Outbox) {
        self.base = base
    }

    /// The calls so far, by name, in order.
    var names: [String] { self.calls.withLock { $0 } }

    fileprivate func note(_ name: String) {
        self.calls.withLock { $0.append(name) }
    }

    func claimFanOut(perApp: Int) async throws -> FanOutClaim? {
        self.note("claimFanOut")
        return try await self.base.claimFanOut(perApp: perApp)
    }

    func claimSlice(perApp: Int) async throws -> FanOutClaim? {
        self.note("claimSlice")
        return try await self.base.claimSlice(perApp: perApp)
    }

    func withFanOutSession<Result: Sendable>(
        _ claim: FanOutClaim,
        limits: FanOutLimits,
        _ body: @escaping @Sendable (any FanOutSession) async throws -> Result
    ) async throws -> Result {
        try await self.base.withFanOutSession(claim, limits: limits) { session in
            try await body(CountingFanOutSession(session, driver: self))
        }
    }
}

/// A session whose every call is counted by its driver.
private final class CountingFanOutSession: FanOutSession {
    private let base: any FanOutSession
    private let driver: CountingFanOutDriver

    init(_ base: any FanOutSession, driver: CountingFanOutDriver) {
        self.base = base
        self.driver = driver
    }

    var claim: FanOutClaim { self.base.claim }
    var busy: [Int64: Int64] { self.base.busy }
    var channelIsLive: Bool { self.base.channelIsLive }

    func begin() async throws -> FanOutStep {
        self.driver.note("begin")
        return try await self.base.begin()
    }

    func recordChannel(_ record: ChannelRecord) async throws -> FanOutStep {
        self.driver.note("recordChannel")
        return try await self.base.recordChannel(record)
    }

    func record(_ page: PageRecord, next: Bool) async throws -> (step: FanOutStep, recorded: PageRecorded) {
        self.driver.note("record")
        return try await self.base.record(page, next: next)
    }

    func finish(_ ending: FanOutEnding) async throws {
        self.driver.note("finish")
        try await self.base.finish(ending)
    }
}
