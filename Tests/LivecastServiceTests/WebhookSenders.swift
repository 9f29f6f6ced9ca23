import LivecastService

/// Runs `body` with a sender, shut down after it whatever happens.
func withSender<Result: Sendable>(
    timeout: Duration = .seconds(10),
    allowPrivate: Bool = false,
    _ body: (WebhookSender) async throws -> Result
) async throws -> Result {
    let sender = WebhookSender(timeout: timeout, allowPrivate: allowPrivate)
    do {
        let result = try await body(sender)
        try await sender.shutdown()
        return result
    } catch {
        try? await sender.shutdown()
        throw error
    }
}
