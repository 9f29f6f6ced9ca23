import Foundation
import Testing

@testable import LivecastKit

/// The store file keeps the device id. One that exists but cannot be read is never replaced behind the app's back:
/// the client says so, keeps this launch's reports in memory and sends nothing until it can read it.
@Suite struct StoreFileTests {
    @Test func theDeviceIDIsKeptAcrossLaunches() async throws {
        let stub = StubLivecast()
        let directory = try TemporaryDirectory()
        let first = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
        let id = try #require(first.deviceID)
        #expect(UUID(uuidString: id) != nil)
        await first.shutdown()
        let second = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
        #expect(second.deviceID == id)
        await second.shutdown()
    }

    @Test func anUnreadableFileIsLeftAloneAndTheReportsWaitUntilItCanBeRead() async throws {
        let stub = StubLivecast()
        let directory = try TemporaryDirectory()
        let kept = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
        let keptID = try #require(kept.deviceID)
        await kept.shutdown()
        let file = directory.url.appendingPathComponent(PendingStore.fileName)
        let good = try Data(contentsOf: file)
        let damaged = Data("{\"deviceID\": \"\(keptID)\", trunc".utf8)
        try damaged.write(to: file)

        let client = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
        let events = EventRecorder(client)
        #expect(client.deviceID == nil, "no made-up id")
        await client.register(pushToStartToken: Data([0xAA]), for: "GameAttributes")
        await client.resume()
        try await eventually("the event") { !events.events(.storeUnreadable).isEmpty }
        #expect(events.events(.storeUnreadable).first?.message?.contains(PendingStore.fileName) == true)
        try await Task.sleep(for: .milliseconds(100))
        #expect(stub.requests.isEmpty, "nothing is sent without the kept id")
        #expect(await client.pendingReports.count == 1, "the report waits in memory")
        #expect(try Data(contentsOf: file) == damaged, "the file is untouched")

        // The file becomes readable (the device was unlocked, say): the kept id is adopted, the report goes.
        try good.write(to: file)
        await client.resume()
        try await idle(client)
        #expect(client.deviceID == keptID)
        #expect(stub.requests.map(\.route) == ["PUT /push-to-start-tokens/\(keptID)/GameAttributes"])
        #expect(stub.requests.first?.headers["livecast-device-id"] == keptID)
        await client.shutdown()
    }

    @Test func aDamagedFileCanBeDiscardedOnPurpose() async throws {
        let stub = StubLivecast()
        let directory = try TemporaryDirectory()
        let file = directory.url.appendingPathComponent(PendingStore.fileName)
        try Data("garbage".utf8).write(to: file)
        let client = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
        await client.register(pushToStartToken: Data([0xAA]), for: "GameAttributes")
        #expect(client.deviceID == nil)
        await client.discardUnreadableStore()
        try await idle(client)
        let id = try #require(client.deviceID)
        #expect(stub.requests.map(\.route) == ["PUT /push-to-start-tokens/\(id)/GameAttributes"])
        let aside = directory.url.appendingPathComponent(PendingStore.unreadableFileName)
        #expect(try Data(contentsOf: aside) == Data("garbage".utf8), "kept aside for a person to look at")
        #expect(try String(contentsOf: file, encoding: .utf8).contains(id))
        await client.shutdown()
    }
}
