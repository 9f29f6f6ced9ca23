import ArgumentParser

/// Where `serve` listens: the API, its metrics, the proxies it trusts, and how long a connection may idle or a request arrive.
struct ListenOptions: ParsableArguments {
    @Option(help: "HOST:PORT to listen on (default: $LIVECAST_LISTEN, else 127.0.0.1:8080).")
    var listen: String?

    @Option(help: "HOST:PORT of the metrics listener, GET /metrics, apart from the API (default: $LIVECAST_METRICS_LISTEN, else 127.0.0.1:9464).")
    var metricsListen: String?

    @Option(
        help: """
            Reverse proxies whose X-Forwarded-For names the client, as comma-separated addresses or CIDR blocks such as \
            10.0.0.0/8 (default: $LIVECAST_TRUSTED_PROXIES, else none: the client is the peer).
            """
    )
    var trustedProxies: String?

    @Option(
        help:
            "Seconds an API connection may sit idle, a half-sent request head included, before it is closed (default: $LIVECAST_HTTP_IDLE_TIMEOUT, else 60)."
    )
    var httpIdleTimeout: Int?

    @Option(
        help:
            "Seconds a request may take to arrive, head to end of body, before its connection is closed (default: $LIVECAST_HTTP_READ_TIMEOUT, else 30)."
    )
    var httpReadTimeout: Int?

    /// These flags, by setting key.
    var flags: [String: String?] {
        [
            "listen": self.listen,
            "metrics-listen": self.metricsListen,
            "trusted-proxies": self.trustedProxies,
            "http-idle-timeout": self.httpIdleTimeout.map { "\($0)" },
            "http-read-timeout": self.httpReadTimeout.map { "\($0)" },
        ]
    }
}
