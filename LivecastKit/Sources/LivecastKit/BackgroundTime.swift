#if canImport(UIKit) && !os(watchOS)
import UIKit
#endif

/// Keeps the app running while a report is being sent: a push-to-start wakes the app in the background for a few
/// seconds only, and that wake is the one chance to report the new activity and its update token. The client holds
/// one assertion for each try of a report (the user assertion it fetches, the request and its answer) and releases
/// it before it waits out a backoff.
///
/// On iOS it is `UIApplication.beginBackgroundTask(withName:expirationHandler:)`, released by `endBackgroundTask`, or
/// by the system's expiration handler when the time runs out (the report then stays in the store file for the next
/// launch). Elsewhere there is nothing to hold; the tests put a recorder in its place.
struct BackgroundTime: Sendable {
    /// One held assertion.
    struct Assertion: Sendable {
        /// Releases it; a second call does nothing.
        let end: @Sendable () async -> Void
    }

    /// Begins an assertion, named for what it covers.
    let begin: @Sendable (_ name: String) async -> Assertion

    /// Holds nothing.
    static let none = BackgroundTime { _ in Assertion {} }

    /// The platform's: the application's background tasks on iOS, nothing elsewhere.
    static var system: BackgroundTime {
        #if canImport(UIKit) && !os(watchOS)
        ApplicationBackgroundTask.backgroundTime
        #else
        .none
        #endif
    }
}

#if canImport(UIKit) && !os(watchOS)
/// One `UIApplication` background task, ended once: by the client after its try, or by the system's expiration
/// handler, whichever comes first.
@MainActor
private final class ApplicationBackgroundTask {
    private var identifier = UIBackgroundTaskIdentifier.invalid

    nonisolated static let backgroundTime = BackgroundTime { name in
        await MainActor.run {
            let task = ApplicationBackgroundTask()
            task.begin(name)
            return BackgroundTime.Assertion { await task.end() }
        }
    }

    private func begin(_ name: String) {
        self.identifier = UIApplication.shared.beginBackgroundTask(withName: name) {
            // Called on the main thread when the time runs out: the task must end now, or the app is killed.
            MainActor.assumeIsolated { self.end() }
        }
    }

    private func end() {
        guard self.identifier != .invalid else { return }
        UIApplication.shared.endBackgroundTask(self.identifier)
        self.identifier = .invalid
    }
}
#endif
