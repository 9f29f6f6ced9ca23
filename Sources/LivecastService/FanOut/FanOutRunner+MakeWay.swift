import LivecastStore

extension FanOutRunner {
    /// Splits a page's pushes around its busy targets (``Outbox/clearOlderOwed(_:ofFeed:after:through:upTo:on:)``): the
    /// ones to send now, and the ones deferred behind an older push in flight, to be owed. A target whose push of
    /// this very update is in flight (a repeated page) gets neither: that push is this one. A push's target is its
    /// ``PageTarget/ownerID``.
    func makeWay(
        for targets: [PageTarget],
        kind: OwedTarget.Kind,
        busy: [Int64: Int64],
        updateID: Int64
    ) -> (ready: [PageTarget], deferred: [OwedTarget]) {
        guard !busy.isEmpty else { return (targets, []) }
        var ready: [PageTarget] = []
        var deferred: [OwedTarget] = []
        ready.reserveCapacity(targets.count)
        for target in targets {
            switch busy[target.ownerID] {
            case nil: ready.append(target)
            case updateID?: continue
            case _?: deferred.append(.deferred(kind, target.ownerID))
            }
        }
        return (ready, deferred)
    }
}
