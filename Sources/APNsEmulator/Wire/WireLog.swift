import Foundation
import NIOConcurrencyHelpers

/// The emulator's wire log: device pushes and broadcasts in arrival order, each with its answer, behind one lock.
///
/// A request takes its sequence number when it arrives (``arrive(target:body:)``) and gets its answer once the
/// emulator has one (``answer(_:status:reason:)``), so the order is the order requests reached the emulator even when
/// connections on other event loops are answered in between.
final class WireLog: Sendable {
    private struct Contents {
        var records: [WireRecord] = []
        /// The sequence of `records[0]`, or of the next record when there are none.
        var firstSequence = 0
    }

    private let contents = NIOLockedValueBox(Contents())

    /// Records a request that has just arrived, with no answer yet.
    /// - Parameters:
    ///   - target: `device:<token>` or `channel:<id>`.
    ///   - body: What was read of its body.
    /// - Returns: The request's sequence number, for ``answer(_:status:reason:)``.
    func arrive(target: String, body: WireBody) -> Int {
        self.contents.withLockedValue { contents in
            let sequence = contents.firstSequence + contents.records.count
            contents.records.append(
                WireRecord(
                    sequence: sequence,
                    arrivedAt: Date().timeIntervalSince1970,
                    target: target,
                    timestamp: body.timestamp,
                    event: body.event,
                    bodyDigest: body.digest,
                    contentState: body.contentState
                )
            )
            return sequence
        }
    }

    /// Records the answer to a request; nothing when the log was cleared since it arrived.
    /// - Parameters:
    ///   - sequence: What ``arrive(target:body:)`` returned.
    ///   - status: The status answered, or `nil` when no answer was sent.
    ///   - reason: The APNs reason of a non-200 answer.
    ///   - deviceDropped: Why the simulated devices silently dropped the accepted push, if they did.
    func answer(_ sequence: Int, status: Int?, reason: String?, deviceDropped: String? = nil) {
        let answeredAt = status == nil ? nil : Date().timeIntervalSince1970
        self.contents.withLockedValue { contents in
            let index = sequence - contents.firstSequence
            guard contents.records.indices.contains(index) else { return }
            contents.records[index].status = status
            contents.records[index].reason = reason
            contents.records[index].answeredAt = answeredAt
            contents.records[index].deviceDropped = deviceDropped
        }
    }

    /// The records with a sequence above `after` (all when `nil`), in arrival order.
    func records(after: Int? = nil) -> [WireRecord] {
        self.contents.withLockedValue { contents in
            guard let after, after >= contents.firstSequence else { return contents.records }
            guard after - contents.firstSequence < contents.records.count else { return [] }
            return Array(contents.records[(after - contents.firstSequence + 1)...])
        }
    }

    /// Forgets every record; sequence numbers keep counting.
    /// - Returns: How many records were forgotten.
    @discardableResult
    func clear() -> Int {
        self.contents.withLockedValue { contents in
            let count = contents.records.count
            contents.firstSequence += count
            contents.records.removeAll()
            return count
        }
    }
}
