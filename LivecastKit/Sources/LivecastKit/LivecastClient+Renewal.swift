import Foundation

extension LivecastClient {
    /// Returns once Livecast acknowledged a registration of the activity with its update token or channel, so that
    /// Livecast can update it: `true`. `false` when the activity is reported over first, the client shuts down, or
    /// the calling task is cancelled. A renewal waits for it before it ends the older activity of the same feed.
    func waitUntilAddressable(_ activityID: String) async -> Bool {
        let subject = LivecastReport.subject(ofActivity: activityID)
        if self.state.acknowledged[subject]?.content.givesActivityAddress == true { return true }
        if let latest = self.state.latest(of: subject), LivecastReport(latest).endsActivity { return false }
        guard !self.isShutDown else { return false }
        let key = UUID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                self.addressWaiters[activityID, default: [:]][key] = continuation
                if Task.isCancelled { self.resumeAddressWaiter(activityID, key: key) }
            }
        } onCancel: {
            Task { await self.resumeAddressWaiter(activityID, key: key) }
        }
    }

    /// Ends the waits for an activity's address: `addressable` once Livecast acknowledged it, not when the activity
    /// is over.
    func resumeAddressWaiters(of activityID: String, addressable: Bool) {
        for waiter in (self.addressWaiters.removeValue(forKey: activityID) ?? [:]).values { waiter.resume(returning: addressable) }
    }

    /// Ends every wait for an address, unanswered (the client shuts down).
    func resumeAddressWaiters() {
        let waiters = self.addressWaiters.values.flatMap(\.values)
        self.addressWaiters = [:]
        for waiter in waiters { waiter.resume(returning: false) }
    }

    private func resumeAddressWaiter(_ activityID: String, key: UUID) {
        self.addressWaiters[activityID]?.removeValue(forKey: key)?.resume(returning: false)
    }

    /// Reports the end of an activity this client ends on the device because a newer one of its feed replaced it
    /// (a renewal), and remembers that its dismissal, which follows at once, is not the user's: Livecast must not
    /// take it as one, or it would leave the device out of the feed's next renewals and starts.
    func retire(_ activityID: String) {
        self.retiredActivities.insert(activityID)
        self.activityEnded(activityID)
    }

    /// Reports an activity gone from the device: dismissed by the user, unless this client ended it for a renewal
    /// (then its end is all there is to say).
    func activityLeft(_ activityID: String) {
        if self.retiredActivities.contains(activityID) {
            self.activityEnded(activityID)
        } else {
            self.activityDismissed(activityID)
        }
    }

    /// Notes whether an activity the app scheduled is still pending (iOS 26 `.pending`) or has started, and reports
    /// it again when that changes: Livecast leaves a device with a pending activity of a feed out of that feed's
    /// starts, so a backend does not start a second one.
    func setPending(_ activityID: String, _ pending: Bool) {
        let changed = pending ? self.pendingActivities.insert(activityID).inserted : self.pendingActivities.remove(activityID) != nil
        guard changed, let latest = self.state.latest(of: LivecastReport.subject(ofActivity: activityID)), latest.isRegistration else { return }
        self.enqueue(latest.withPending(pending))
    }

    /// Forgets that an activity is pending, without a report: it ended before it started.
    func forgetPending(_ activityID: String) {
        self.pendingActivities.remove(activityID)
    }
}
