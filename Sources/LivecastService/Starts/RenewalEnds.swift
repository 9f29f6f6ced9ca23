import Foundation
import LivecastStore
package import Logging
package import PostgresNIO

/// Ends an activity a renewal replaced, once its successor has a live update token: on its own token, through the
/// outbox, with a past `dismissal-date`, so it leaves the Lock Screen at once and the user sees only the new one.
/// The registration that gives the successor its token asks for it; the reaper catches any it missed.
package struct RenewalEnds: Sendable {
    let database: PostgresClient
    var logger: Logger

    package init(database: PostgresClient, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    /// The same ender logging to `logger`: a route passes its request's.
    package func logging(to logger: Logger) -> Self {
        var ends = self
        ends.logger = logger
        return ends
    }

    /// Ends the replaced activity `activityKey` of the app.
    /// - Returns: Whether its end was accepted; `false` when it ended meanwhile.
    @discardableResult
    package func end(_ activityKey: String, appID: Int64) async throws -> Bool {
        do {
            _ = try await ActivityUpdates(client: self.database, logger: self.logger).endFollower(
                appID: appID,
                activityKey: activityKey,
                dismissalDate: Int(Date().timeIntervalSince1970) - 1,
                by: .renewal
            )
            return true
        } catch let error as StoreError where error.code == .activityEnded || error.code == .notFound {
            return false
        }
    }
}
