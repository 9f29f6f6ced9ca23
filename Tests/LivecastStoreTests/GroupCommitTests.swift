import Synchronization
import Testing

@testable import LivecastStore

/// The group commit's queue, without a database: what waits while a write runs goes in the next write, except
/// what its caller withdrew by being cancelled.
@Suite struct GroupCommitTests {
    @Test func aCancelledCallersWaitingItemIsAnsweredCancelledAndNeverWritten() async throws {
        let (opening, open) = AsyncStream<Void>.makeStream()
        let written = Mutex<[[Int]]>([])
        let commits = GroupCommit<Int, Int>(maximumBatch: 10) { items in
            written.withLock { $0.append(items) }
            if items == [1] {
                for await _ in opening { break }  // the first write waits until the test opens it
            }
            return items.map { .success($0 * 10) }
        }
        let first = Task { try await commits.submit(1) }
        while written.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(5)) }
        let second = Task { try await commits.submit(2) }
        let third = Task { try await commits.submit(3) }
        try await Task.sleep(for: .milliseconds(200))  // both wait behind the first write (or are about to)
        second.cancel()
        open.yield()

        #expect(try await first.value == 10)
        #expect(try await third.value == 30)
        await #expect(throws: CancellationError.self) { try await second.value }
        #expect(written.withLock { $0 } == [[1], [3]])
    }
}
