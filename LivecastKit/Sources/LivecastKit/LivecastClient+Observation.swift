public import Foundation

extension LivecastClient {
    /// Reports every push-to-start token the sequence yields (ActivityKit's `Activity<A>.pushToStartTokenUpdates`,
    /// or any other source), until it ends or throws. Each registration carries the latest frequent-updates setting
    /// (``setFrequentUpdatesEnabled(_:)``).
    /// - Parameter frequentUpdatesEnabled: The setting now, when known; later changes go to
    ///   ``setFrequentUpdatesEnabled(_:)``.
    public nonisolated func observe<Tokens: AsyncSequence>(
        pushToStartTokens tokens: Tokens,
        attributesType: String,
        frequentUpdatesEnabled: Bool? = nil
    ) async where Tokens.Element == Data {
        if let frequentUpdatesEnabled { await self.noteFrequentUpdatesEnabled(frequentUpdatesEnabled) }
        do {
            for try await token in tokens {
                await self.register(pushToStartToken: token, for: attributesType)
            }
        } catch {
            return
        }
    }

    /// Reports an activity and follows it until it is over: every update token (ActivityKit's `pushTokenUpdates`)
    /// is registered until it ends, and its end and dismissal (from `activityStateUpdates`) are reported, and whether
    /// it is ``LivecastActivityState/pending``. Returns once it is dismissed (or its states end); an activity already
    /// observed is not observed twice: the call then returns at once.
    /// - Parameter channelID: The broadcast channel it subscribed to, for a channel-based activity (iOS 18+).
    public nonisolated func observe<Tokens: AsyncSequence & Sendable, States: AsyncSequence & Sendable>(
        activity: LivecastActivity,
        channelID: String? = nil,
        updateTokens: Tokens,
        states: States
    ) async where Tokens.Element == Data, States.Element == LivecastActivityState {
        guard await self.claimObservation(of: activity.id) else { return }
        if let channelID {
            await self.register(activity: activity, channelID: channelID)
        }
        await self.follow(
            activity.id,
            updateTokens: { await self.observeUpdateTokens(of: activity, updateTokens) },
            states: { report in
                do {
                    for try await state in states {
                        guard await report(state) else { return }
                    }
                } catch {
                    return
                }
            }
        )
    }

    /// Registers every update token of an activity, until the sequence ends or throws.
    nonisolated func observeUpdateTokens<Tokens: AsyncSequence>(of activity: LivecastActivity, _ tokens: Tokens) async where Tokens.Element == Data {
        do {
            for try await token in tokens {
                await self.register(activity: activity, updateToken: token)
            }
        } catch {
            return
        }
    }

    /// Follows an activity already claimed (``claimObservation(of:)``) until it is over, then releases it.
    ///
    /// `states` hands each state of the activity to its argument, which reports an end, a dismissal (or, for an
    /// activity this client ended for a renewal, only its end) and whether it is pending, and answers whether to go
    /// on: after a dismissal it does not. `updateTokens` runs until the activity ends (it is cancelled
    /// then: an ended activity gets no more pushes) or its own sequence ends. So both end with the activity, and
    /// the activity leaves ``observedActivities``.
    nonisolated func follow(
        _ activityID: String,
        updateTokens: @escaping @Sendable () async -> Void,
        states: @escaping @Sendable (_ report: @escaping @Sendable (LivecastActivityState) async -> Bool) async -> Void
    ) async {
        let (ended, endedSink) = AsyncStream.makeStream(of: Void.self)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await states { state in
                    switch state {
                    case .ended:
                        await self.forgetPending(activityID)
                        await self.activityEnded(activityID)
                        endedSink.finish()
                        return true
                    case .dismissed:
                        await self.activityLeft(activityID)
                        return false
                    case .pending:
                        await self.setPending(activityID, true)
                        return true
                    case .active, .stale:
                        await self.setPending(activityID, false)
                        return true
                    }
                }
                endedSink.finish()
            }
            group.addTask {
                await withTaskGroup(of: Void.self) { tokens in
                    tokens.addTask { await updateTokens() }
                    tokens.addTask { for await _ in ended {} }
                    await tokens.next()
                    tokens.cancelAll()
                }
            }
        }
        await self.releaseObservation(of: activityID)
    }
}
