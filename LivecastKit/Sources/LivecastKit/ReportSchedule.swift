/// Which pending reports may go now, so that each lane keeps its order and the device's lane is a barrier.
///
/// Reports of one activity (or one attributes type's push-to-start token) go one at a time, in the order they
/// were made; different lanes go side by side. An unregistration of the device goes only once every report made
/// before it is done, and no report made after it goes before it.
enum ReportSchedule {
    /// - Parameters:
    ///   - pending: The pending reports, in the order they were made.
    ///   - busy: The lanes with a report in flight.
    /// - Returns: The reports to start now: the first of each idle lane, up to the first device report.
    static func startable(_ pending: [PendingState.Pending], busy: Set<LivecastReport.Lane>) -> [PendingState.Pending] {
        var seen: Set<LivecastReport.Lane> = []
        var startable: [PendingState.Pending] = []
        for (index, item) in pending.enumerated() {
            let lane = item.report.lane
            if lane == .device {
                if index == 0, !busy.contains(lane) { startable.append(item) }
                break
            }
            if seen.insert(lane).inserted, !busy.contains(lane) { startable.append(item) }
        }
        return startable
    }
}
