import LivecastKit
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

    deinit { self.task.cancel() }
}
