#if os(Linux)
import Foundation

/// What the stand-in "system" holds: the activities of each attributes type, the push-to-start tokens and the
/// user's settings.
final class ActivityRegistry: @unchecked Sendable {
    // @unchecked: every property is read and written under `lock`; the broadcasts lock themselves.
    static let shared = ActivityRegistry()

    /// One attributes type's activities and push-to-start token.
    final class Entry: @unchecked Sendable {
        // @unchecked: `activities` and `pushToStartToken` are read and written under the registry's lock.
        fileprivate(set) var activities: [AnyObject] = []
        fileprivate(set) var pushToStartToken: Data?
        let started = Broadcast<UncheckedBox>()
        let pushToStartTokens = Broadcast<Data>()
    }

    private let lock = NSLock()
    private var entries: [ObjectIdentifier: Entry] = [:]
    private var activitiesEnabled = true
    private var frequentPushes = false
    private var silentSequences = false
    private(set) var activitiesEnabledUpdates = Broadcast<Bool>()
    private(set) var frequentPushesUpdates = Broadcast<Bool>()

    func entry(for type: Any.Type) -> Entry {
        self.lock.withLock {
            if let entry = self.entries[ObjectIdentifier(type)] { return entry }
            let entry = Entry()
            self.entries[ObjectIdentifier(type)] = entry
            return entry
        }
    }

    /// A snapshot of a type's activities (read under the lock).
    func activities(of type: Any.Type) -> [AnyObject] {
        let entry = self.entry(for: type)
        return self.lock.withLock { entry.activities }
    }

    func add(_ activity: AnyObject, to type: Any.Type) {
        let entry = self.entry(for: type)
        self.lock.withLock { entry.activities.append(activity) }
        entry.started.yield(UncheckedBox(value: activity))
    }

    func remove(_ activity: AnyObject, from type: Any.Type) {
        let entry = self.entry(for: type)
        self.lock.withLock { entry.activities.removeAll { $0 === activity } }
    }

    func setPushToStartToken(_ token: Data, for type: Any.Type) {
        let entry = self.entry(for: type)
        let silent = self.lock.withLock {
            entry.pushToStartToken = token
            return self.silentSequences
        }
        if !silent { entry.pushToStartTokens.yield(token) }
    }

    var areActivitiesEnabled: Bool { self.lock.withLock { self.activitiesEnabled } }
    var frequentPushesEnabled: Bool { self.lock.withLock { self.frequentPushes } }
    /// Whether the push-to-start token and frequent-updates sequences stay silent, as they can on a device.
    var areSequencesSilent: Bool { self.lock.withLock { self.silentSequences } }

    func setSequencesSilent(_ silent: Bool) {
        self.lock.withLock { self.silentSequences = silent }
    }

    func setActivitiesEnabled(_ enabled: Bool) {
        self.lock.withLock { self.activitiesEnabled = enabled }
        self.activitiesEnabledUpdates.yield(enabled)
    }

    func setFrequentPushesEnabled(_ enabled: Bool) {
        let silent = self.lock.withLock {
            self.frequentPushes = enabled
            return self.silentSequences
        }
        if !silent { self.frequentPushesUpdates.yield(enabled) }
    }

    /// Forgets every activity and token, ends every sequence, and restores the default settings.
    func reset() {
        let (entries, updates) = self.lock.withLock {
            defer {
                self.entries = [:]
                self.activitiesEnabled = true
                self.frequentPushes = false
                self.silentSequences = false
                self.activitiesEnabledUpdates = Broadcast<Bool>()
                self.frequentPushesUpdates = Broadcast<Bool>()
            }
            return (Array(self.entries.values), [self.activitiesEnabledUpdates, self.frequentPushesUpdates])
        }
        for entry in entries {
            for activity in entry.activities { (activity as? any StandInActivity)?.finishSequences() }
            entry.started.finish()
            entry.pushToStartTokens.finish()
        }
        for update in updates { update.finish() }
    }
}
#endif
