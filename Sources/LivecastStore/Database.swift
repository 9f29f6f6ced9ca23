package import Logging
package import PostgresNIO

/// The PostgreSQL pool and the logger that a part of the store runs its statements with; made by
/// ``DatabaseBacked/init(client:logger:)``.
package struct Database: Sendable {
    /// The pool every statement runs on.
    let client: PostgresClient
    /// Where the statements log.
    let logger: Logger
}

/// A part of the store that needs nothing but the ``Database``: made the same way by everyone who holds one.
package protocol DatabaseBacked: Sendable {
    /// The pool and logger its statements use.
    var database: Database { get }

    init(database: Database)
}

extension DatabaseBacked {
    /// The part, running its statements on `client` and logging to `logger`.
    package init(client: PostgresClient, logger: Logger) {
        self.init(database: Database(client: client, logger: logger))
    }

    /// The pool its statements run on.
    var client: PostgresClient { self.database.client }

    /// Where its statements log.
    var logger: Logger { self.database.logger }

    /// The same part logging to `logger`: a route passes its request's logger, so that the part's log lines, and
    /// PostgreSQL's, carry the request id.
    package func logging(to logger: Logger) -> Self {
        Self(database: Database(client: self.client, logger: logger))
    }
}
