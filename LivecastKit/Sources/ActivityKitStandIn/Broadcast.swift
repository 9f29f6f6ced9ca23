#if os(Linux)
import Foundation

/// A value that many readers follow: each read of a sequence (`pushTokenUpdates`, …) subscribes an `AsyncStream`,
/// which gets every later value and ends when the stand-in says so, or when its reader goes away.
final class Broadcast<Element: Sendable>: @unchecked Sendable {
    // @unchecked: every property is read and written under `lock`.
    private let lock = NSLock()
    private var subscribers: [UUID: AsyncStream<Element>.Continuation] = [:]
    private var isFinished = false

    /// A new reader's sequence, starting with `initial` when there is one.
    func subscribe(initial: Element? = nil) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self)
        let id = UUID()
        let finished = self.lock.withLock {
            if !self.isFinished { self.subscribers[id] = continuation }
            return self.isFinished
        }
        if let initial { continuation.yield(initial) }
        if finished {
            continuation.finish()
        } else {
            continuation.onTermination = { [weak self] _ in
                guard let self else { return }
                self.lock.withLock { _ = self.subscribers.removeValue(forKey: id) }
            }
        }
        return stream
    }

    /// Gives every reader `value`.
    func yield(_ value: Element) {
        for continuation in self.lock.withLock({ Array(self.subscribers.values) }) { continuation.yield(value) }
    }

    /// Ends every reader's sequence, and those of later readers.
    func finish() {
        let continuations = self.lock.withLock {
            self.isFinished = true
            defer { self.subscribers = [:] }
            return Array(self.subscribers.values)
        }
        for continuation in continuations { continuation.finish() }
    }

    /// How many readers follow it now.
    var subscriberCount: Int { self.lock.withLock { self.subscribers.count } }
}

/// An object handed between tasks inside the stand-in, whose own state is behind a lock.
struct UncheckedBox: @unchecked Sendable {
    let value: AnyObject
}
#endif
