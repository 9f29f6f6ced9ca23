package import Configuration
import LivecastSettings

extension AppleMetricsJob.Settings {
    /// How Apple's figures are fetched, as settings give it; what they leave out keeps its default.
    ///
    /// - Configuration keys:
    ///   - `apple-metrics-url` (an `https://` URL, default `https://api.icloud.apple.com`): Apple's data-export host;
    ///     the emulator's push port (`https://localhost:2197`) in a test or demo.
    ///   - `apple-metrics-threshold` (a number above 0, at most 1, default 0.05): how far Apple's figures and
    ///     Livecast's may differ, as a share of the larger, before a day is flagged.
    /// - Throws: ``InvalidSetting`` for a value out of range.
    package init(reader: ConfigReader) throws {
        self.init()
        let url = reader.text("apple-metrics-url", default: self.url) ?? self.url
        guard url.hasPrefix("https://") || url.hasPrefix("http://"), url.count > 8 else {
            throw InvalidSetting(key: "apple-metrics-url", value: url, allowed: "must be an https:// URL, such as https://api.icloud.apple.com")
        }
        self.url = url
        let threshold = try reader.positiveNumber("apple-metrics-threshold", default: self.threshold)
        guard threshold <= 1 else {
            throw InvalidSetting(key: "apple-metrics-threshold", value: "\(threshold)", allowed: "must be above 0 and at most 1")
        }
        self.threshold = threshold
    }
}
