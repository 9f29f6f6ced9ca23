import LivecastTesting
import Logging
import Testing

@testable import livecast

/// serve's log lines carry the logger's metadata as `StreamLogHandler`'s do, though it is rendered only when a line is
/// written.
@Suite struct DeferredMetadataLogHandlerTests {
    @Test func aLineCarriesTheLoggersMetadataAndItsOwn() {
        let lines = LogLines()
        var logger = Logger(label: "livecast") {
            DeferredMetadataLogHandler(writingTo: StreamLogHandler(label: $0, stream: lines, metadataProvider: nil))
        }
        logger[metadataKey: "hb.request.id"] = "1"
        logger[metadataKey: "hb.request.id"] = "2"
        logger.info("answered", metadata: ["status": "202"])
        logger.debug("below the level")
        #expect(lines.written.count == 1)
        #expect(lines.written.first?.contains("hb.request.id=2 status=202") == true, "\(lines.written)")
        #expect(lines.written.first?.hasSuffix("] answered\n") == true, "\(lines.written)")
    }
}
