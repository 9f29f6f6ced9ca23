import LivecastStore
import PostgresNIO

extension PostgresClient.Configuration {
    /// The configuration of the service's PostgreSQL pool, made from the database's: each connection's
    /// `statement_timeout`, TCP keep-alives instead of keep-alive queries, no just-in-time compilation and the name
    /// `livecast`.
    /// - Parameter statementTimeout: PostgreSQL's `statement_timeout` for every statement (`nil`: none).
    func forService(statementTimeout: Duration?) -> Self {
        var configuration = self
        configuration.statementTimeout = statementTimeout
        // No keep-alive queries. The pool sets a keep-alive timer each time a connection goes back idle and cancels
        // it at the next lease: a task group of two tasks and a libdispatch timer at every lease under load
        // (docs/PERFORMANCE.md). PostgreSQL keeps the connections alive instead, with TCP
        // keep-alive probes after 60 s of silence (every 10 s, 6 unanswered close it), so that no firewall or load
        // balancer between them forgets a connection that stays quiet: the two `LISTEN`s (the outbox's and the key
        // cache's) hold theirs for as long as the service runs.
        configuration.options.keepAliveBehavior = nil
        configuration.options.additionalStartupParameters += [
            ("tcp_keepalives_idle", "60"), ("tcp_keepalives_interval", "10"), ("tcp_keepalives_count", "6"),
        ]
        // No connections kept open (the pool's `minimumConnections` stays 0), though the pool sets an idle timer
        // (a `Task.sleep`, so a libdispatch timer) on each connection beyond its minimum at every release. With a
        // minimum, postgres-nio 1.33's pool stops the process during an outage: while connections fail to open, it
        // drops each failed one but the one it retries, and a lease that then finds fewer than the minimum trips its
        // precondition `minimumConcurrentConnections <= stats.active` (`ServicePoolTests` restarts PostgreSQL under
        // leases to catch it).
        // No just-in-time compilation of plans. PostgreSQL compiles a plan whose estimated cost passes `jit_above_cost`
        // (100,000), and inlines and optimises it past 500,000: statistics taken while a backlog was pending put a
        // fan-out claim past both, and compiling it took far longer than the statement runs (docs/PERFORMANCE.md).
        // Livecast's statements are short; none gains from compiling.
        configuration.options.additionalStartupParameters.append(("jit", "off"))
        // Named, so that an operator tells the service's connections apart in `pg_stat_activity`.
        configuration.options.additionalStartupParameters.append(("application_name", "livecast"))
        return configuration
    }
}
