import Synchronization

/// The webhook deliveries each app has under way through one deliverer's workers, against a most per app: an app's
/// endpoints hold at most ``limit`` of the workers, however many endpoints it has and however slowly they answer.
///
/// The workers claim one at a time (``claim(_:)``): each claim leaves out the apps already at their most and is
/// counted before the next one looks, so no two claims running side by side can both take an app's last place.
final class AppShares: Sendable {
    /// The most deliveries of one app at once.
    let limit: Int

    private struct State {
        var underWay: [Int64: Int] = [:]
        var isClaiming = false
        /// Workers waiting for their turn to claim, in the order they came.
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    init(limit: Int) {
        self.limit = max(limit, 1)
    }

    /// Runs `claim` in its turn, given the apps at their most, and counts what it claimed as a delivery of its app
    /// under way until ``leave(_:)``.
    /// - Parameter claim: Claims work of an app not in the list it is given, or `nil` when none is due.
    func claim<Claimed>(_ claim: ([Int64]) async throws -> (claimed: Claimed, app: Int64)?) async throws -> Claimed? {
        let full = await self.takeTurn()
        do {
            let claimed = try await claim(full)
            self.endTurn(counting: claimed?.app)
            return claimed?.claimed
        } catch {
            self.endTurn(counting: nil)
            throw error
        }
    }

    /// Counts a delivery of `app` as ended.
    func leave(_ app: Int64) {
        self.state.withLock { state in
            let left = state.underWay[app, default: 1] - 1
            state.underWay[app] = left > 0 ? left : nil
        }
    }

    /// Waits until no other worker claims. - Returns: The apps at their most.
    private func takeTurn() async -> [Int64] {
        await withCheckedContinuation { continuation in
            let isFree = self.state.withLock { state in
                guard state.isClaiming else {
                    state.isClaiming = true
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if isFree { continuation.resume() }
        }
        return self.state.withLock { state in state.underWay.filter { $0.value >= self.limit }.map(\.key) }
    }

    /// Counts the claim's app, and gives the turn to the next waiting worker.
    private func endTurn(counting app: Int64?) {
        let next = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let app { state.underWay[app, default: 0] += 1 }
            guard !state.waiting.isEmpty else {
                state.isClaiming = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
