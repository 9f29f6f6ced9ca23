import Foundation

/// What the API reads about an app's resources, as one store its controllers hold: an activity's record, a device's
/// tokens, an update's status and a feed's history, the dead letters, the overview. Each read is its record's own
/// (``ActivityRecord/read(appID:activityID:client:logger:)`` and the like, which the CLI calls with its own pool).
package struct Records: DatabaseBacked {
    package let database: Database

    package init(database: Database) { self.database = database }

    /// An activity of an app by its ActivityKit id; `nil` when the app has no such activity.
    package func activity(appID: Int64, activityID: String) async throws -> ActivityRecord? {
        try await ActivityRecord.read(appID: appID, activityID: activityID, client: self.client, logger: self.logger)
    }

    /// A device's push-to-start tokens; `nil` when the app knows no token of that device.
    package func deviceTokens(appID: Int64, deviceID: String) async throws -> DeviceTokens? {
        try await DeviceTokens.read(appID: appID, deviceID: deviceID, client: self.client, logger: self.logger)
    }

    /// One of an app's updates; `nil` when the app has no such update.
    package func update(_ updateID: Int64, appID: Int64) async throws -> UpdateStatus? {
        try await UpdateStatus.read(updateID: updateID, appID: appID, client: self.client, logger: self.logger)
    }

    /// A feed's updates, newest first: at most `limit`, older than `before` when given; `nil` for no such feed.
    package func updates(ofFeed feedKey: String, appID: Int64, before: Int64?, limit: Int) async throws -> [UpdateStatus]? {
        try await UpdateStatus.history(feedKey: feedKey, appID: appID, before: before, limit: limit, client: self.client, logger: self.logger)
    }

    /// An app's dead letters, oldest first: at most `limit`, after the id `after` when given.
    package func deadLetters(appID: Int64, after: Int64?, limit: Int) async throws -> [DeadLetterEntry] {
        try await DeadLetterEntry.list(appID: appID, after: after, limit: limit, client: self.client, logger: self.logger)
    }

    /// An app's overview; `nil` for an unknown app.
    /// - Parameter registrationTimeout: How long after a start its app has to register the activity.
    package func overview(appID: Int64, registrationTimeout: Duration) async throws -> AppOverview? {
        try await AppOverview.read(appID: appID, registrationTimeout: registrationTimeout, client: self.client, logger: self.logger)
    }
}
