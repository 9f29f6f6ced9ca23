import ServiceLifecycle

/// The loop of a periodic service: waits `interval`, runs `tick`, and again, the wait counted from the end of one
/// tick to the start of the next. The first tick comes after an interval, so a starting `serve` applies its
/// migrations first. On graceful shutdown or cancellation it stops waiting, or lets the tick in progress finish,
/// and returns.
func periodically(every interval: Duration, _ tick: () async -> Void) async {
    while (try? await cancelWhenGracefulShutdown({ try await Task.sleep(for: interval) })) != nil, !Task.isShuttingDownGracefully, !Task.isCancelled {
        await tick()
    }
}
