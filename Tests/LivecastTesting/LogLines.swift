import Logging
import Synchronization

/// The lines a test's logger wrote, for tests that check what was logged.
///
/// ```swift
/// let lines = LogLines()
/// let logger = lines.logger(label: "test")
/// ```
package final class LogLines: TextOutputStream, Sendable {
    private let lines = Mutex<[String]>([])

    package init() {}

    /// Every line written so far, in order.
    package var written: [String] { self.lines.withLock { $0 } }

    package func write(_ string: String) {
        self.lines.withLock { $0.append(string) }
    }

    /// A logger whose `StreamLogHandler` writes here, at `level`.
    package func logger(label: String, level: Logger.Level = .info) -> Logger {
        var logger = Logger(label: label) { StreamLogHandler(label: $0, stream: self, metadataProvider: nil) }
        logger.logLevel = level
        return logger
    }
}
