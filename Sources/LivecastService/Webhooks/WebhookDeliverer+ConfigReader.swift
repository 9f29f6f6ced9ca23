package import Configuration
import LivecastCore
import LivecastSettings

extension WebhookDeliverer.Settings {
    /// How webhooks are delivered, as settings give it; what they leave out keeps its default.
    ///
    /// - Configuration keys:
    ///   - `webhook-allow-private` (boolean, default false): deliver to private, loopback and link-local addresses
    ///     too (a receiver on the private network); otherwise only public addresses are, and plain HTTP to loopback.
    /// - Throws: ``InvalidSetting`` for a value that is not a boolean.
    package init(reader: ConfigReader) throws {
        self.init()
        self.allowPrivate = try reader.boolean("webhook-allow-private", default: self.allowPrivate)
    }
}
