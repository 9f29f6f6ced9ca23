import Synchronization

/// How many of a batch's requests may be made now. At most `size` are out at once: the batch's maker takes room for
/// several at a time (so the pool is handed several per hop, not one) and waits while there is too little; each answer
/// gives one back. The maker builds the requests on its own task, off the connections' event loops.
final class RequestWindow: Sendable {
    private struct State {
        var available: Int
        var isClosed = false
        /// The maker waiting for room: the least it waits for, the most it takes.
        var waiter: (least: Int, most: Int, continuation: CheckedContinuation<Int, Never>)?
    }

    private let state: Mutex<State>

    /// - Parameter size: The most requests out at once.
    init(size: Int) {
        self.state = Mutex(State(available: size))
    }

    /// Waits until `least` requests may be made, then takes room for as many as there is, up to `most`.
    /// - Returns: How many requests to make now; 0 once the window is closed.
    func take(atLeast least: Int, atMost most: Int) async -> Int {
        await withCheckedContinuation { continuation in
            let taken: Int? = self.state.withLock { state in
                if state.isClosed { return 0 }
                guard state.available >= least else {
                    state.waiter = (least, most, continuation)
                    return nil
                }
                let taken = min(state.available, most)
                state.available -= taken
                return taken
            }
            if let taken { continuation.resume(returning: taken) }
        }
    }

    /// An answer came back: its room is free again.
    func give() {
        let resume: (CheckedContinuation<Int, Never>, Int)? = self.state.withLock { state in
            state.available += 1
            guard let waiter = state.waiter, state.available >= waiter.least else { return nil }
            let taken = min(state.available, waiter.most)
            state.available -= taken
            state.waiter = nil
            return (waiter.continuation, taken)
        }
        if let (continuation, taken) = resume { continuation.resume(returning: taken) }
    }

    /// The batch was given up (its deadline passed): the maker makes no more.
    func close() {
        let waiter = self.state.withLock { state in
            state.isClosed = true
            defer { state.waiter = nil }
            return state.waiter?.continuation
        }
        waiter?.resume(returning: 0)
    }
}
