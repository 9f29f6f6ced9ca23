import ArgumentParser

/// `serve`'s background workers: the dispatcher (its retries, slices and start budget), the reaper's period and the webhook workers and their timeout.
struct WorkerOptions: ParsableArguments {
    @Option(help: "Dispatcher workers: outbox claims sent at once (default: $LIVECAST_DISPATCH_WORKERS, else 4; 0 runs none here).")
    var dispatchWorkers: Int?

    @Option(
        help:
            "Seconds a push APNs keeps asking to retry stays owed before it is a dead letter; an end is kept while its activity can show (default: $LIVECAST_RETRY_DEADLINE, else 3600)."
    )
    var retryDeadline: Int?

    @Option(
        help: """
            A feed's token-based followers per slice: a fan-out to more is split into slices that every instance's \
            workers walk side by side (default: $LIVECAST_FAN_OUT_SLICE, else 50000).
            """
    )
    var fanOutSlice: Int?

    @Option(
        help: """
            Push-to-start notifications (starts and renewals) one device is sent in --start-budget-window; a start \
            without room waits until there is (default: $LIVECAST_START_BUDGET, else 8).
            """
    )
    var startBudget: Int?

    @Option(help: "The rolling window of --start-budget, in seconds (default: $LIVECAST_START_BUDGET_WINDOW, else 3600).")
    var startBudgetWindow: Int?

    @Option(help: "Seconds between reaper passes on the one instance holding the lock (default: $LIVECAST_REAP_INTERVAL, else 60; 0 disables).")
    var reapInterval: Int?

    @Option(
        help: """
            Webhook workers: endpoints delivered to at once, where dispatcher workers run (default: \
            $LIVECAST_WEBHOOK_WORKERS, else 4; 0 runs none here).
            """
    )
    var webhookWorkers: Int?

    @Option(
        help: """
            Seconds a webhook delivery may take, from looking its host up to the end of its answer's body \
            (default: $LIVECAST_WEBHOOK_TIMEOUT, else 10).
            """
    )
    var webhookTimeout: Int?

    @Flag(help: "Deliver webhooks to private, loopback and link-local addresses too (default: $LIVECAST_WEBHOOK_ALLOW_PRIVATE, else false).")
    var webhookAllowPrivate = false

    /// These flags, by setting key.
    var flags: [String: String?] {
        [
            "dispatch-workers": self.dispatchWorkers.map { "\($0)" },
            "retry-deadline": self.retryDeadline.map { "\($0)" },
            "fan-out-slice": self.fanOutSlice.map { "\($0)" },
            "start-budget": self.startBudget.map { "\($0)" },
            "start-budget-window": self.startBudgetWindow.map { "\($0)" },
            "reap-interval": self.reapInterval.map { "\($0)" },
            "webhook-workers": self.webhookWorkers.map { "\($0)" },
            "webhook-timeout": self.webhookTimeout.map { "\($0)" },
            "webhook-allow-private": self.webhookAllowPrivate ? "true" : nil,
        ]
    }
}
