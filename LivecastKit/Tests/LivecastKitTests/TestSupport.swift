import Foundation
import Testing

@testable import LivecastKit

/// A value behind a lock, for the tests' shared state (Synchronization's `Mutex` needs macOS 15).
final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is read and written under `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try self.lock.withLock { try body(&self.value) }
    }
}

/// A wall clock the test sets: "8 days later".
final class TestClock: Sendable {
    private let date: Locked<Date>

    init(_ start: Date = Date(timeIntervalSinceReferenceDate: 800_000_000)) { self.date = Locked(start) }

    var now: Date { self.date.withLock { $0 } }

    /// The clock as a configuration takes it.
    var function: @Sendable () -> Date { { self.now } }

    func advance(days: Double) { self.date.withLock { $0 += days * 24 * 3600 } }
}

/// A directory of its own, removed at the end.
final class TemporaryDirectory: Sendable {
    let url: URL

    init() throws {
        self.url = FileManager.default.temporaryDirectory.appendingPathComponent("livecastkit-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: self.url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: self.url) }
}

/// Keeps every event a client tells, for the test to look at.
final class EventRecorder: Sendable {
    private let recorded = Locked<[LivecastEvent]>([])
    private let task: Task<Void, Never>

    init(_ client: LivecastClient) {
        let recorded = self.recorded
        self.task = Task {
            for await event in client.events { recorded.withLock { $0.append(event) } }
        }
    }

    var events: [LivecastEvent] { self.recorded.withLock { $0 } }

    func events(_ kind: LivecastEvent.Kind) -> [LivecastEvent] { self.events.filter { $0.kind == kind } }

    deinit { self.task.cancel() }
}

/// How long a test waits for something that should happen in milliseconds.
let patience: Duration = .seconds(20)

struct TimedOut: Error, CustomStringConvertible {
    let description: String
}

/// Waits until the client has nothing pending.
func idle(_ client: LivecastClient) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await client.waitUntilIdle() }
        group.addTask {
            try await Task.sleep(for: patience)
            throw TimedOut(description: "still pending: \(await client.pendingReports)")
        }
        try await group.next()
        group.cancelAll()
    }
}

/// Waits until `condition` holds.
func eventually(_ what: String = "the condition", _ condition: () async -> Bool) async throws {
    let deadline = ContinuousClock.now + patience
    while !(await condition()) {
        guard ContinuousClock.now < deadline else { throw TimedOut(description: "\(what) never held") }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// Stands in for `UIApplication`'s background tasks: counts the assertions held now and begun so far.
final class BackgroundRecorder: Sendable {
    private let counts = Locked((held: 0, begun: 0))

    /// How many assertions are held now.
    var held: Int { self.counts.withLock { $0.held } }
    /// How many were begun so far.
    var begun: Int { self.counts.withLock { $0.begun } }

    /// The seam a configuration takes.
    var backgroundTime: BackgroundTime {
        BackgroundTime { _ in
            self.counts.withLock {
                $0.held += 1
                $0.begun += 1
            }
            let ended = Locked(false)
            return BackgroundTime.Assertion {
                guard
                    ended.withLock({ ended in
                        defer { ended = true }
                        return !ended
                    })
                else { return }
                self.counts.withLock { $0.held -= 1 }
            }
        }
    }
}
