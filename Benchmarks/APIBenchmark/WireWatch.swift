import APNsEmulator
import NIOCore

/// When pushes reach the wire: the in-process emulator's count of answered APNs requests, polled every 100 µs.
struct WireWatch: Sendable {
    let emulator: APNsEmulator

    /// APNs requests the emulator has answered so far.
    var answered: Int { self.emulator.answeredRequests }

    /// Waits until the emulator has answered `count` requests in all.
    /// - Returns: When the count was first seen there, or `nil` if it was not within `timeout`.
    func waitUntil(answered count: Int, timeout: Duration) async throws -> NIODeadline? {
        let deadline = NIODeadline.now() + TimeAmount(timeout)
        while self.answered < count {
            guard NIODeadline.now() < deadline else { return nil }
            try await Task.sleep(for: .microseconds(100))
        }
        return .now()
    }

    /// Waits until no request has reached the emulator for `quiet` (pushes of earlier modes still in the outbox
    /// would otherwise be counted), at most `timeout`.
    /// - Throws: ``BenchmarkFailure`` when pushes still come after `timeout`.
    func waitForQuiet(_ quiet: Duration = .seconds(1), timeout: Duration = .seconds(300)) async throws {
        let deadline = NIODeadline.now() + TimeAmount(timeout)
        var last = self.answered
        var since = NIODeadline.now()
        while NIODeadline.now() - since < TimeAmount(quiet) {
            guard NIODeadline.now() < deadline else { throw BenchmarkFailure("pushes still reach the emulator after \(timeout)") }
            try await Task.sleep(for: .milliseconds(50))
            let now = self.answered
            if now != last { (last, since) = (now, .now()) }
        }
    }
}
