import Foundation
import Testing

@testable import LivecastKit

/// At launch, what ActivityKit shows is compared with what the client reported: an activity that ended or was
/// dismissed while the app was not running is reported.
@Suite struct ReconcileTests {
    @Test func activitiesThatEndedOrWentAwayMeanwhileAreReported() async throws {
        let stub = StubLivecast()
        let directory = try TemporaryDirectory()
        let first = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
        for id in ["gone", "ended", "dismissed", "running", "over"] {
            await first.register(activity: LivecastActivity(id: id, attributesType: "GameAttributes"), updateToken: Data([0x01]))
        }
        await first.register(activity: LivecastActivity(id: "order", attributesType: "OrderAttributes"), updateToken: Data([0x02]))
        await first.activityEnded("over")
        try await idle(first)
        await first.shutdown()
        let before = stub.requests.count

        let relaunched = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
        await relaunched.reconcile(
            attributesType: "GameAttributes",
            running: ["ended": .ended, "dismissed": .dismissed, "running": .active, "new": .active]
        )
        try await idle(relaunched)
        let routes = stub.requests.dropFirst(before).map(\.route).sorted()
        #expect(
            routes == ["DELETE /activities/ended", "POST /activities/dismissed/dismissed", "POST /activities/gone/dismissed"],
            "the running one, the one already reported ended, the unknown one and the other type's are left alone"
        )

        await relaunched.reconcile(attributesType: "GameAttributes", running: ["running": .active])
        try await idle(relaunched)
        #expect(stub.requests.count == before + 3, "reported once")
        await relaunched.shutdown()
    }
}
