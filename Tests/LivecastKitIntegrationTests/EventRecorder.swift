import LivecastKit
import LivecastTesting
import Synchronization

/// Keeps every event a client tells, for the test to look at.
final class EventRecorder: Sendable {
    private final class Events: Sendable {
        let list = Mutex<[LivecastEvent]>([])
    }

    private let recorded = Events()
    private let task: Task<Void, Never>

    init(_ client: LivecastClient) {
        let recorded = self.recorded
        self.task = Task {
            for await event in client.events { recorded.list.withLock { $0.append(event) } }
        }
    }

    var events: [LivecastEvent] { self.recorded.list.withLock { $0 } }

    func events(_ kind: LivecastEvent.Kind) -> [LivecastEvent] { self.events.filter { $0.kind == kind } }

    /// Waits until `count` events of `kind` are recorded, for a minute at most: the recorder reads the client's
    /// stream on a task of its own, so an event the client told before it went idle may not be recorded yet on a busy
    /// machine.
    func waitFor(_ count: Int, _ kind: LivecastEvent.Kind) async throws {
        try await eventually(within: .seconds(60), "\(count) \(kind) events") { self.events(kind).count >= count }
    }

    deinit { self.task.cancel() }
}
