package import Configuration
import LivecastCore
import LivecastSettings

extension WebhookDeliverer.Settings {
    /// How webhooks are delivered, as settings give it; what they leave out keeps its default.
    ///
    /// - Configuration keys:
    ///   - `webhook-allow-private` (boolean, default false): deliver to private, loopback and link-local addresses
    ///     too (a receiver on the private network); otherwise only public addresses are, and plain HTTP to loopback.
    ///   - `webhook-timeout` (whole seconds, 1 or more, default 10): a delivery's limit, from looking its host up to
    ///     the end of its answer's body.
    /// - Throws: ``InvalidSetting`` for a value that is not a boolean, or a timeout under a second.
    package init(reader: ConfigReader) throws {
        self.init()
        self.allowPrivate = try reader.boolean("webhook-allow-private", default: self.allowPrivate)
        self.timeout = try reader.seconds("webhook-timeout", atLeast: 1, default: self.timeout)
    }
}
