import NIOCore
import Synchronization

/// Gathers a batch's outcomes from the connections' event loops and answers the caller once, when all are in.
///
/// The outcomes sit behind one lock: a record takes it for a few instructions. (A lock-free version, a slot per outcome
/// claimed by compare-and-exchange, was no faster in `scripts/bench.sh`'s client rounds, so the simpler one stays.) A
/// watchdog past the deadline gives up on the slots still empty, so the caller is answered even if an exchange was
/// lost.
final class OutcomeCollector: Sendable {
    private struct Slots {
        var outcomes: [APNsOutcome?]
        var remaining: Int
        /// The watchdog, cancelled once every outcome is in.
        var watchdog: Scheduled<Void>?
        /// The caller, once it waits for the outcomes.
        var waiter: CheckedContinuation<[APNsOutcome], Never>?
    }

    private let slots: Mutex<Slots>

    init(count: Int) {
        self.slots = Mutex(Slots(outcomes: Array(repeating: nil, count: count), remaining: count))
    }

    /// Every outcome, in the requests' order, once all are in.
    func outcomes() async -> [APNsOutcome] {
        await withCheckedContinuation { continuation in
            let done: [APNsOutcome]? = self.slots.withLock { slots in
                guard slots.remaining > 0 else { return slots.outcomes.map { $0! } }
                slots.waiter = continuation
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }

    /// Keeps `outcome` unless the slot was already given up on.
    func record(_ outcome: APNsOutcome, at index: Int) {
        self.finish { slots in
            guard slots.outcomes[index] == nil else { return }
            slots.outcomes[index] = outcome
            slots.remaining -= 1
        }
    }

    /// Keeps the watchdog's task, to cancel it once every outcome is in.
    func watch(_ task: Scheduled<Void>) {
        let done = self.slots.withLock { slots in
            slots.watchdog = task
            return slots.remaining == 0
        }
        if done { task.cancel() }
    }

    /// Gives up on every slot still empty, with a deadline failure.
    func expire() {
        self.finish { slots in
            for index in slots.outcomes.indices where slots.outcomes[index] == nil {
                slots.outcomes[index] = APNsOutcome(error: TransportError(.deadlineExceeded, "no outcome by the deadline"))
                slots.remaining -= 1
            }
        }
    }

    /// Applies `change`; if it filled the last slot, cancels the watchdog and answers the caller if it waits.
    private func finish(_ change: (inout Slots) -> Void) {
        let finished: (outcomes: [APNsOutcome], watchdog: Scheduled<Void>?, waiter: CheckedContinuation<[APNsOutcome], Never>?)? =
            self.slots.withLock { slots in
                guard slots.remaining > 0 else { return nil }
                change(&slots)
                guard slots.remaining == 0 else { return nil }
                defer { slots.waiter = nil }
                return (slots.outcomes.map { $0! }, slots.watchdog, slots.waiter)
            }
        guard let finished else { return }
        finished.watchdog?.cancel()
        finished.waiter?.resume(returning: finished.outcomes)
    }
}
