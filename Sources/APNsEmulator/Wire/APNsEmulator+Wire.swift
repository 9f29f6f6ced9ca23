extension APNsEmulator {
    /// Every device push and broadcast recorded since the start or the last ``clearWireRecords()``, in arrival order,
    /// each with its answer; empty unless ``Configuration/recordsWire`` is on. A copy: later requests do not change it.
    ///
    /// Judge it with ``WireJudge/judge(_:)``.
    public var wireRecords: [WireRecord] {
        self.state.wire?.records() ?? []
    }

    /// The wire records with a sequence above `sequence`, in arrival order.
    /// - Parameter sequence: The last sequence already seen.
    public func wireRecords(after sequence: Int) -> [WireRecord] {
        self.state.wire?.records(after: sequence) ?? []
    }

    /// Forgets the wire records kept so far; sequence numbers keep counting, so `after` stays meaningful.
    public func clearWireRecords() {
        self.state.wire?.clear()
    }
}
