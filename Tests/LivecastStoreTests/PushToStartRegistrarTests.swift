import Foundation
import LivecastTesting
import PostgresNIO
import Testing

@testable import LivecastStore

/// Registrations that arrive together are written together (group commit), each with its own result.
@Suite struct PushToStartRegistrarTests {
    private static let deviceCount = 200

    @Test func concurrentRegistrationsShareTransactionsAndKeepTheirOwnResults() async throws {
        try await StoreFixture.with("ptst_group_commit") { fixture in
            let registrar = PushToStartRegistrar(client: fixture.client, logger: fixture.logger)
            let tokens = PushToStartTokens(client: fixture.client, logger: fixture.logger)
            // device-0 holds a token that device-1 then reports too (a reinstall): a move inside a batch of new devices.
            _ = try await tokens.register(Self.registration(fixture, device: "device-0", token: "ff00"))
            let results = await withTaskGroup(of: (Int, Result<PushToStartTokens.Result, any Error>).self) { group in
                for device in 1...Self.deviceCount {
                    group.addTask {
                        let token = device == 1 ? "ff00" : String(format: "%04x", device)
                        do {
                            return (
                                device, .success(try await registrar.register(Self.registration(fixture, device: "device-\(device)", token: token)))
                            )
                        } catch {
                            return (device, .failure(error))
                        }
                    }
                }
                return await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            }
            #expect(try results[1]?.get() == .moved)
            #expect(try await fixture.rows(device: "device-0").isEmpty, "the token's row went with it")
            for device in 2...Self.deviceCount {
                #expect(try results[device]?.get() == .created, "device-\(device)")
            }
            let rows = try await fixture.client.query(
                "SELECT count(*)::int, count(DISTINCT xmin::text)::int FROM push_to_start_tokens WHERE app_id = \(fixture.appID) AND device_id <> 'device-0'"
            )
            for try await (count, transactions) in rows.decode((Int, Int).self) {
                #expect(count == Self.deviceCount)
                #expect(transactions <= count / 4, "\(count) registrations took \(transactions) transactions")
            }
            // A batch's unchanged and rotated results are told apart too.
            #expect(try await registrar.register(Self.registration(fixture, device: "device-2", token: "0002")) == .unchanged)
            #expect(try await registrar.register(Self.registration(fixture, device: "device-2", token: "0b02")) == .rotated)
        }
    }

    @Test func aBatchRunsAsIfItsNewDevicesHadComeFirst() async throws {
        try await StoreFixture.with("ptst_group_order") { fixture in
            let tokens = PushToStartTokens(client: fixture.client, logger: fixture.logger)
            _ = try await tokens.register(Self.registration(fixture, device: "known-1", token: "aa01"))
            _ = try await tokens.register(Self.registration(fixture, device: "known-2", token: "aa02"))
            var again = Self.registration(fixture, device: "new-3", token: "aa03")
            again.userID = "second"
            let batch = [
                Self.registration(fixture, device: "known-1", token: "aa01"),
                Self.registration(fixture, device: "new-3", token: "aa03"),
                again,
                Self.registration(fixture, device: "new-4", token: "aa02"),
                // known-2 and new-5 both name a new token: it goes in the batch's order, moving to new-5 last.
                Self.registration(fixture, device: "known-2", token: "aa05"),
                Self.registration(fixture, device: "new-5", token: "aa05"),
            ]
            let results = await PushToStartTokens.write(batch, client: fixture.client, logger: fixture.logger).map { result in
                switch result {
                case .success(let result): result.rawValue
                case .failure(let error): (error as? StoreError)?.code.rawValue ?? "\(error)"
                }
            }
            #expect(results == ["unchanged", "created", "unchanged", "moved", "created", "moved"])

            let rows = try await fixture.client.query(
                """
                SELECT device_id, token, coalesce(user_id, '') FROM push_to_start_tokens
                WHERE app_id = \(fixture.appID) AND invalidated_at IS NULL ORDER BY device_id
                """
            )
            var live: [String] = []
            for try await (device, token, user) in rows.decode((String, String, String).self) { live.append("\(device) \(token) \(user)") }
            #expect(live == ["known-1 aa01 ", "new-3 aa03 second", "new-4 aa02 ", "new-5 aa05 "])
        }
    }

    @Test func aTokenThatIsNotHexIsRefusedBeforeItIsQueued() async throws {
        try await StoreFixture.with("ptst_group_invalid") { fixture in
            let registrar = PushToStartRegistrar(client: fixture.client, logger: fixture.logger)
            await #expect(throws: StoreError.self) { try await registrar.register(Self.registration(fixture, device: "d", token: "xyz")) }
        }
    }

    private static func registration(_ fixture: StoreFixture, device: String, token: String) -> PushToStartTokens.Registration {
        .init(appID: fixture.appID, deviceID: device, attributesType: "GameAttributes", token: token)
    }
}
