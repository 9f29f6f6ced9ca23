import Logging

/// Writes what swift-log's `StreamLogHandler` writes, but renders a logger's metadata only when a message is
/// logged. `StreamLogHandler` renders it again each time a value is set: Hummingbird sets each request's id, so every
/// request paid for rendering metadata that was almost never written (docs/PERFORMANCE.md).
struct DeferredMetadataLogHandler: LogHandler {
    /// Writes the messages; its own metadata stays empty.
    private var output: StreamLogHandler
    var metadata = Logger.Metadata()

    init(writingTo output: StreamLogHandler) {
        self.output = output
    }

    var logLevel: Logger.Level {
        get { self.output.logLevel }
        set { self.output.logLevel = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { self.output.metadataProvider }
        set { self.output.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.metadata[key] }
        set { self.metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        event.metadata = self.metadata.merging(event.metadata ?? [:]) { _, explicit in explicit }
        self.output.log(event: event)
    }
}
