import Foundation

extension LivecastClient {
    /// A report waiting out its backoff: woken by its timer, by ``LivecastClient/resume()`` (no sooner than
    /// `notBefore`, Livecast's `Retry-After`), or by cancellation.
    struct Sleeper {
        let continuation: CheckedContinuation<Void, Never>
        var timer: Task<Void, Never>
        let notBefore: ContinuousClock.Instant?
    }

    /// Starts the reports the schedule allows now; none while the store file cannot be read.
    func startReports() {
        guard !self.isShutDown, self.unreadableStore == nil else { return }
        for item in ReportSchedule.startable(self.state.pending, busy: Set(self.inFlight.keys)) {
            self.inFlight[item.report.lane] = (item.sequence, Task { await self.deliver(item) })
        }
    }

    /// Tries a report until it is acknowledged, refused or too old, or the client shuts down. A registration bound to
    /// a user goes with a fresh assertion each try; refused twice (or without one), it goes without the user.
    private func deliver(_ item: PendingState.Pending) async {
        let policy = self.configuration.retryPolicy
        var failures = 0
        var assertionRefusals = 0
        var bindsUser = item.report.userID != nil
        while !Task.isCancelled {
            if self.configuration.now().timeIntervalSince(item.madeAt) > policy.reportLifetime.timeInterval {
                return self.finish(
                    item,
                    acknowledged: false,
                    event: .dropped,
                    status: nil,
                    message: "undelivered for longer than \(policy.reportLifetime)"
                )
            }
            var assertion: String?
            if bindsUser, let userID = item.report.userID {
                switch await self.assertion(for: userID) {
                case .success(let value):
                    assertion = value
                case .failure(let failure):
                    self.emit(.identityBindingFailed, item.report, message: "\(failure.message); sent without the user")
                    bindsUser = false
                }
                guard !Task.isCancelled else { return }
            }
            let content = bindsUser ? item.report.content : item.report.content.withUser(nil)
            let deviceID = self.state.deviceID
            let answer = await self.transport.send(
                ReportRequest(LivecastReport(content), deviceID: deviceID, userAssertion: assertion),
                deviceID: deviceID
            )
            guard !Task.isCancelled else { return }
            if bindsUser, case .answered(403, _, let code?, let message) = answer, Self.assertionRefusals.contains(code) {
                assertionRefusals += 1
                if assertionRefusals >= 2 {
                    self.emit(.identityBindingFailed, item.report, status: 403, code: code, message: "\(message ?? code); sent without the user")
                    bindsUser = false
                }
                continue
            }
            switch RetryPolicy.verdict(for: answer, of: item.report) {
            case .delivered(let status):
                return self.finish(item, acknowledged: true, sent: content, event: .delivered, status: status)
            case .refused(let status, let code, let message):
                return self.finish(item, acknowledged: false, event: .dropped, status: status, code: code, message: message)
            case .retry(let retryAfter, let status, let message):
                failures += 1
                let delay = policy.delay(afterFailures: failures, retryAfter: retryAfter)
                self.emit(.retrying, item.report, status: status, message: message, retryDelay: delay)
                let notBefore = retryAfter.map { ContinuousClock.now + min($0, policy.maximumRetryAfter) }
                await self.pause(item.sequence, for: delay, notBefore: notBefore)
            }
        }
    }

    /// The answers that refuse a user assertion: asked for again once, then the registration goes without the user.
    private static let assertionRefusals: Set<String> = ["invalid_user_assertion", "user_assertion_required"]

    /// Waits out a backoff, unless ``resume()``, cancellation or shutdown cuts it short.
    private func pause(_ sequence: Int, for delay: Duration, notBefore: ContinuousClock.Instant?) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let timer = Task {
                    do { try await Task.sleep(for: delay) } catch { return }
                    self.wake(sequence)
                }
                self.sleepers[sequence] = Sleeper(continuation: continuation, timer: timer, notBefore: notBefore)
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

    private func finish(
        _ item: PendingState.Pending,
        acknowledged: Bool,
        sent: LivecastReport.Content? = nil,
        event: LivecastEvent.Kind,
        status: Int?,
        code: String? = nil,
        message: String? = nil
    ) {
        self.state.finish(sequence: item.sequence, acknowledged: acknowledged, sent: sent, now: self.configuration.now())
        self.persist()
        if self.inFlight[item.report.lane]?.sequence == item.sequence { self.inFlight[item.report.lane] = nil }
        self.emit(event, item.report, status: status, code: code, message: message)
        self.startReports()
        if self.state.pending.isEmpty { self.resumeIdleWaiters() }
    }

    func emit(
        _ kind: LivecastEvent.Kind,
        _ report: LivecastReport?,
        status: Int? = nil,
        code: String? = nil,
        message: String? = nil,
        retryDelay: Duration? = nil
    ) {
        self.eventSink.yield(LivecastEvent(kind: kind, report: report, status: status, errorCode: code, message: message, retryDelay: retryDelay))
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
