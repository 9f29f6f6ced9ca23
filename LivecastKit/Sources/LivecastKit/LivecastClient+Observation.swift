public import Foundation

extension LivecastClient {
    /// Reports every push-to-start token the sequence yields (ActivityKit's `Activity<A>.pushToStartTokenUpdates`,
    /// or any other source), until it ends or throws.
    public nonisolated func observe<Tokens: AsyncSequence>(
        pushToStartTokens tokens: Tokens,
        attributesType: String,
        frequentUpdatesEnabled: Bool? = nil
    ) async where Tokens.Element == Data {
        do {
            for try await token in tokens {
                await self.register(pushToStartToken: token, for: attributesType, frequentUpdatesEnabled: frequentUpdatesEnabled)
            }
        } catch {
            return
        }
    }

    /// Reports an activity and follows it until both sequences end: every update token (ActivityKit's
    /// `pushTokenUpdates`) is registered, and its end and dismissal (from `activityStateUpdates`) are reported.
    /// An activity already observed is not observed twice: the call then returns at once.
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
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.observeUpdateTokens(of: activity, updateTokens) }
            group.addTask { await self.observeStates(of: activity.id, states) }
        }
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

    /// Reports an activity's end and dismissal, until the sequence ends or throws.
    nonisolated func observeStates<States: AsyncSequence>(of activityID: String, _ states: States) async
    where States.Element == LivecastActivityState {
        do {
            for try await state in states {
                switch state {
                case .ended: await self.activityEnded(activityID)
                case .dismissed: await self.activityDismissed(activityID)
                case .active, .stale: continue
                }
            }
        } catch {
            return
        }
    }
}
