import Logging
import Synchronization

/// The lines a test's logger wrote, for tests that check what was logged.
///
/// ```swift
/// let lines = LogLines()
/// let logger = lines.logger(label: "test")
/// ```
public final class LogLines: TextOutputStream, Sendable {
    private let lines = Mutex<[String]>([])

    public init() {}

    /// Every line written so far, in order.
    public var written: [String] { self.lines.withLock { $0 } }

    public func write(_ string: String) {
        self.lines.withLock { $0.append(string) }
    }

    /// A logger whose `StreamLogHandler` writes here, at `level`.
    public func logger(label: String, level: Logger.Level = .info) -> Logger {
        var logger = Logger(label: label) { StreamLogHandler(label: $0, stream: self, metadataProvider: nil) }
        logger.logLevel = level
        return logger
    }
}
