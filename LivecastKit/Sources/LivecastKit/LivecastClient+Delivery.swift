import Foundation

extension LivecastClient {
    /// A report waiting out its backoff: woken by its timer, by ``LivecastClient/resume()`` (no sooner than
    /// `notBefore`, Livecast's `Retry-After`), or by cancellation; a held one also by ``wakeHeld(lane:)``.
    struct Sleeper {
        let continuation: CheckedContinuation<Void, Never>
        var timer: Task<Void, Never>
        let notBefore: ContinuousClock.Instant?
        /// Whether it waits for something to change rather than out a failure (``LivecastEvent/Kind/held``).
        let isHeld: Bool
    }

    /// Starts the reports the schedule allows now; none while the store file cannot be read.
    func startReports() {
        guard !self.isShutDown, self.unreadableStore == nil else { return }
        for item in ReportSchedule.startable(self.state.pending, busy: Set(self.inFlight.keys)) {
            self.inFlight[item.report.lane] = (item.sequence, Task { await self.deliver(item) })
        }
    }

    /// Tries a report until it is acknowledged, given up or too old, or the client shuts down. A registration bound
    /// to a user goes with a fresh assertion each try; refused twice (or without one), it goes without the user.
    /// A held report that a later report of its subject replaced meanwhile is done with, unsent.
    private func deliver(_ item: PendingState.Pending) async {
        let policy = self.configuration.retryPolicy
        var failures = 0
        var assertionRefusals = 0
        var bindsUser = item.report.userID != nil
        var wasHeld = false
        while !Task.isCancelled {
            if self.configuration.now().timeIntervalSince(item.madeAt) > policy.reportLifetime.timeInterval {
                return self.finish(
                    item,
                    acknowledged: false,
                    event: .dropped,
                    status: nil,
                    message: "undelivered for longer than \(policy.reportLifetime)",
                    dropReason: .expired
                )
            }
            if wasHeld, !self.state.pending.contains(where: { $0.sequence == item.sequence }) || self.state.hasLaterReport(than: item) {
                // Dropped meanwhile (the device is being unregistered), or replaced by a later report of its subject.
                return self.finish(item, acknowledged: false, event: nil, status: nil)
            }
            wasHeld = false
            if bindsUser, let userID = item.report.userID {
                switch self.binding(of: userID, for: item.report) {
                case .proven:
                    break
                case .waiting(let until):
                    if !self.toldIdentityWait {
                        self.toldIdentityWait = true
                        self.emit(
                            .held,
                            item.report,
                            message: "waits for identify(userID:assertion:) or forgetUser(), so as not to unbind \(userID) in Livecast",
                            retryDelay: until - ContinuousClock.now
                        )
                    }
                    await self.pause(item.sequence, for: until - ContinuousClock.now, notBefore: nil, isHeld: true)
                    wasHeld = true
                    continue
                case .withoutUser(let failure):
                    if let failure { self.emit(.identityBindingFailed, item.report, message: failure) }
                    bindsUser = false
                }
            }
            let background = await self.configuration.backgroundTime.begin("LivecastKit: \(item.report)")
            let tried = await self.send(item.report, bindsUser: bindsUser)
            await background.end()
            guard !Task.isCancelled else { return }
            guard let tried else {
                bindsUser = false
                continue
            }
            let (content, answer) = tried
            if bindsUser, case .answered(403, _, let code?, let message, _) = answer, Self.assertionRefusals.contains(code) {
                assertionRefusals += 1
                if assertionRefusals >= 2 {
                    self.emit(.identityBindingFailed, item.report, status: 403, code: code, message: "\(message ?? code); sent without the user")
                    bindsUser = false
                }
                continue
            }
            switch ReportVerdict(answer, of: item.report) {
            case .delivered(let status):
                return self.finish(item, acknowledged: true, sent: content, event: .delivered, status: status)
            case .refused(let status, let code, let message, let reason):
                return self.finish(item, acknowledged: false, event: .dropped, status: status, code: code, message: message, dropReason: reason)
            case .retry(let retryAfter, let status, let message):
                failures += 1
                let delay = policy.delay(afterFailures: failures, retryAfter: retryAfter)
                self.emit(.retrying, item.report, status: status, message: message, retryDelay: delay)
                let notBefore = retryAfter.map { ContinuousClock.now + min($0, policy.maximumRetryAfter) }
                await self.pause(item.sequence, for: delay, notBefore: notBefore, isHeld: false)
            case .hold(let status, let code, let message):
                let delay = policy.delay(afterFailures: .max)
                self.emit(.held, item.report, status: status, code: code, message: message, retryDelay: delay)
                await self.pause(item.sequence, for: delay, notBefore: nil, isHeld: true)
                wasHeld = true
            }
        }
    }

    /// One try of a report: its user assertion (when it binds a user), the request and the answer, with what was
    /// sent. `nil` when the assertion could not be had: the report then goes without the user
    /// (``LivecastEvent/Kind/identityBindingFailed`` says why).
    private func send(_ report: LivecastReport, bindsUser: Bool) async -> (content: LivecastReport.Content, answer: TransportAnswer)? {
        var assertion: String?
        if bindsUser, let userID = report.userID {
            switch await self.assertion(for: userID) {
            case .success(let value):
                assertion = value
            case .failure(let failure):
                self.emit(.identityBindingFailed, report, message: "\(failure.message); sent without the user")
                return nil
            }
            guard !Task.isCancelled else { return nil }
        }
        let content = bindsUser ? report.content : report.content.withUser(nil)
        let deviceID = self.state.deviceID
        let answer = await self.transport.send(
            ReportRequest(LivecastReport(content), deviceID: deviceID, userAssertion: assertion),
            deviceID: deviceID
        )
        return (content, answer)
    }

    /// The answers that refuse a user assertion: asked for again once, then the registration goes without the user.
    private static let assertionRefusals: Set<String> = ["invalid_user_assertion", "user_assertion_required"]

    /// Waits out a backoff, unless ``resume()``, cancellation or shutdown cuts it short (or, for a held report,
    /// ``wakeHeld(lane:)``).
    private func pause(_ sequence: Int, for delay: Duration, notBefore: ContinuousClock.Instant?, isHeld: Bool) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let timer = Task {
                    do { try await Task.sleep(for: delay) } catch { return }
                    self.wake(sequence)
                }
                self.sleepers[sequence] = Sleeper(continuation: continuation, timer: timer, notBefore: notBefore, isHeld: isHeld)
                if Task.isCancelled || self.isShutDown { self.wake(sequence) }
            }
        } onCancel: {
            Task { await self.wake(sequence) }
        }
    }

    /// Ends one report's backoff now.
    private func wake(_ sequence: Int) {
        guard let sleeper = self.sleepers.removeValue(forKey: sequence) else { return }
        sleeper.timer.cancel()
        sleeper.continuation.resume()
    }

    /// Ends every backoff now, or at its `Retry-After` when that is still ahead.
    func wakeSleepers() {
        let now = ContinuousClock.now
        for (sequence, sleeper) in self.sleepers {
            guard let notBefore = sleeper.notBefore, notBefore > now else {
                self.wake(sequence)
                continue
            }
            sleeper.timer.cancel()
            self.sleepers[sequence]?.timer = Task {
                do { try await Task.sleep(until: notBefore, clock: .continuous) } catch { return }
                self.wake(sequence)
            }
        }
    }

    /// Ends every held report's wait now: the app said who the user is, or something may have made room. With a
    /// lane, only that lane's (a later report of its subject came, which replaces it).
    func wakeHeld(lane: LivecastReport.Lane? = nil) {
        for (sequence, sleeper) in self.sleepers where sleeper.isHeld {
            if let lane, self.inFlight[lane]?.sequence != sequence { continue }
            self.wake(sequence)
        }
    }

    /// Removes a report that is done with, tells it (`event`; `nil` for one a later report replaced), and starts what
    /// may go next. An acknowledged removal may have made room for a held report; an acknowledged token or channel
    /// of an activity is what a renewal waits for (``waitUntilAddressable(_:)``).
    private func finish(
        _ item: PendingState.Pending,
        acknowledged: Bool,
        sent: LivecastReport.Content? = nil,
        event: LivecastEvent.Kind?,
        status: Int?,
        code: String? = nil,
        message: String? = nil,
        dropReason: LivecastEvent.DropReason? = nil
    ) {
        self.state.finish(sequence: item.sequence, acknowledged: acknowledged, sent: sent, now: self.configuration.now())
        self.persist()
        if self.inFlight[item.report.lane]?.sequence == item.sequence { self.inFlight[item.report.lane] = nil }
        if let event { self.emit(event, item.report, status: status, code: code, message: message, dropReason: dropReason) }
        if acknowledged, let id = item.report.activityID, item.report.content.givesActivityAddress {
            self.resumeAddressWaiters(of: id, addressable: true)
        }
        self.startReports()
        if acknowledged, item.report.isRemoval { self.wakeHeld() }
        if self.state.pending.isEmpty { self.resumeIdleWaiters() }
    }

    func emit(
        _ kind: LivecastEvent.Kind,
        _ report: LivecastReport?,
        status: Int? = nil,
        code: String? = nil,
        message: String? = nil,
        retryDelay: Duration? = nil,
        dropReason: LivecastEvent.DropReason? = nil
    ) {
        self.eventSink.yield(
            LivecastEvent(
                kind: kind,
                report: report,
                status: status,
                errorCode: code,
                message: message,
                retryDelay: retryDelay,
                dropReason: dropReason
            )
        )
    }

    func resumeIdleWaiters() {
        let waiters = self.idleWaiters.values
        self.idleWaiters = [:]
        for waiter in waiters { waiter.resume() }
    }

    /// Lets one ``waitUntilIdle()`` return, its task cancelled.
    func resumeIdleWaiter(_ id: UUID) {
        self.idleWaiters.removeValue(forKey: id)?.resume()
    }
}
