import PostgresNIO

extension PostgresClient.Configuration {
    /// The configuration of the service's PostgreSQL pool, made from the database's: each connection's
    /// `statement_timeout`, TCP keep-alives instead of keep-alive queries, no just-in-time compilation, the name
    /// `livecast`, and enough connections kept open that a lease under load sets no timer.
    /// - Parameters:
    ///   - statementTimeout: PostgreSQL's `statement_timeout` for every statement (`nil`: none).
    ///   - dispatchWorkers: The dispatcher's workers, each of which leases a connection for its rounds.
    func forService(statementTimeout: Duration?, dispatchWorkers: Int) -> Self {
        var configuration = self
        configuration.statementTimeout = statementTimeout
        // No keep-alive queries. The pool sets a keep-alive timer each time a connection goes back idle and cancels
        // it at the next lease: a task group of two tasks and a libdispatch timer, thousands of times a second under
        // load (profiled at 1,000 updates a second). PostgreSQL keeps the idle connections alive instead, with TCP
        // keep-alive probes after 60 s of silence (every 10 s, 6 unanswered close it), so that no firewall or load
        // balancer between them forgets a connection kept open through a quiet night.
        configuration.options.keepAliveBehavior = nil
        configuration.options.additionalStartupParameters += [
            ("tcp_keepalives_idle", "60"), ("tcp_keepalives_interval", "10"), ("tcp_keepalives_count", "6"),
        ]
        // Connections kept open: the two `LISTEN`s (the outbox's and the key cache's), the two group commits
        // (updates and registrations) and one for each dispatcher worker. The pool closes any connection beyond
        // them after `connectionIdleTimeout` (60 s), and so sets it an idle timer each time it goes back idle,
        // cancelled at its next lease: a `Task.sleep`, whose libdispatch timer wakes the dispatch manager's thread,
        // for every lease (about 650 a second with 16 connections registering). The pool leases its lowest free
        // connection first, so with these kept open the leases under load take them and set no timer (about 25 a
        // second left).
        configuration.options.minimumConnections = min(4 + dispatchWorkers, configuration.options.maximumConnections)
        // No just-in-time compilation of plans. PostgreSQL compiles a plan whose estimated cost passes `jit_above_cost`
        // (100,000), and inlines and optimises it past 500,000: statistics taken while a backlog was pending put a
        // fan-out claim at 481,000-564,000, and its compilation took 170-815 ms of a statement that runs in well
        // under a millisecond (auto_explain). Livecast's statements are short; none gains from compiling.
        configuration.options.additionalStartupParameters.append(("jit", "off"))
        // Named, so that an operator tells the service's connections apart in `pg_stat_activity`.
        configuration.options.additionalStartupParameters.append(("application_name", "livecast"))
        return configuration
    }
}
