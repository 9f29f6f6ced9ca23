import LivecastStore
import PostgresNIO
import ServiceLifecycle

/// One page of a fan-out, read and sent.
struct SentPage: Sendable {
    /// The page's rows in keyset order (activity ids, or push-to-start token ids): the last is the next cursor.
    var rowIDs: [Int64]
    var delivery: PageDelivery
}

extension FanOutRunner {
    /// Walks a fan-out from its checkpoint, page by page, until a short page. Each page's failures, owed pushes and
    /// APNs' verdicts on its tokens are recorded, then `finish` runs, then the page is checkpointed. (What older
    /// updates still owed the targets was dropped before the walk read a token: ``Outbox/clearOlderOwed(_:ofFeed:after:through:upTo:on:)``.)
    /// - Parameters:
    ///   - sendPage: Reads and sends the page after the claim's cursor; an empty page ends the walk.
    ///   - finish: What a page does once sent and recorded, before its checkpoint.
    /// - Throws: ``StopAtCheckpoint`` on graceful shutdown, after a checkpoint; ``SendingHeld`` after a checkpoint when
    ///   the invalidation guard tripped on a page.
    func walkPages(
        _ claim: inout FanOutClaim,
        tokens: TokenTable,
        on connection: PostgresConnection,
        sendPage: (FanOutClaim) async throws -> SentPage,
        finish: (SentPage) async throws -> Void = { _ in }
    ) async throws {
        while true {
            let page = try await sendPage(claim)
            guard let last = page.rowIDs.last else { return }
            try await self.tools.recorder.record(page.delivery, updateID: claim.updateID, appID: claim.appID, tokens: tokens, on: connection)
            try await finish(page)
            try await self.tools.outbox.checkpoint(
                &claim,
                cursor: last,
                sent: page.delivery.delivered.count,
                failed: page.delivery.failures.count,
                on: connection
            )
            DispatchMetrics.fanOutProgress(page.rowIDs.count)
            if page.delivery.guardReason != nil { throw SendingHeld() }
            if page.rowIDs.count < self.pageSize { return }
            if Task.isShuttingDownGracefully { throw StopAtCheckpoint() }
        }
    }
}
