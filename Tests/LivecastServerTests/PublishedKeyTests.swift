import APNsEmulator
import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

@testable import LivecastServer

/// The published key as a stranger would use it (#52): every copy of the app carries the client key, so what it
/// sends may be anyone's invention. It must not hold the app's sending, get a real token invalidated, name a user
/// it cannot prove, learn which feeds exist, or mint devices without bound.
@Suite struct PublishedKeyTests {
    private static let app = "/v1/apps/com.example.game"

    // MARK: - The invalidation guard

    @Test func madeUpTokensAmongRealOnesNeitherHoldTheAppNorAreSentToAgain() async throws {
        // Pages of 25: the first holds the 8 real phones and 17 made-up tokens (68 % refused, which tripped the guard
        // before #52), the next ones made-up tokens only.
        try await APIFixture.withEmulator("stranger_tokens", dispatcherSettings: .init(pageSize: 25)) { fixture, client, emulator, dispatcher in
            try await Self.feed("game-1", fixture, client)
            let phones = try await Self.realPhones(8, fixture, client, emulator)
            let junk = try await Self.madeUpTokens(50, fixture, client)
            try await Self.start("game-1", fixture, client)
            #expect(try await dispatcher.drain() >= 1)

            #expect(try await Self.isHeld(fixture) == false, "made-up tokens held the app")
            for phone in phones {
                #expect(emulator.emulator.device(id: phone)?.activities.count == 1, "phone \(phone) got its start")
            }
            #expect(try await fixture.count("push_to_start_tokens WHERE invalidated_at IS NOT NULL") == junk.count)
            #expect(try await fixture.count("push_to_start_tokens WHERE invalidated_at IS NULL AND NOT unproven") == phones.count)
            #expect(try await fixture.count("owed_pushes") == 0, "nothing of the junk stays owed")

            // Once the app is proven, a fresh batch of inventions is just as harmless.
            let more = try await Self.madeUpTokens(30, fixture, client, from: 100)
            try await Self.feed("game-2", fixture, client)
            try await Self.start("game-2", fixture, client)
            #expect(try await dispatcher.drain() >= 1)
            #expect(try await Self.isHeld(fixture) == false)
            for phone in phones {
                #expect(emulator.emulator.device(id: phone)?.activities.count == 2, "phone \(phone) got both starts")
            }

            // At the wire: each made-up token was tried once and never again; the phones' pushes are in order.
            let records = emulator.emulator.wireRecords
            for token in junk + more {
                #expect(records.filter { $0.target == "device:\(token)" }.count == 1, "token \(token.prefix(8))… was sent to again")
            }
            let verdict = WireJudge.judge(records)
            #expect(verdict.isClean, "at the wire: \(verdict)")
            #expect(verdict.accepted == 2 * phones.count, "each phone accepted its two starts: \(verdict)")
        }
    }

    @Test func aPreLaunchFloodOfMadeUpTokensNeitherHoldsTheAppNorKeepsRealPhonesFromStarting() async throws {
        // #66 §1, as a stranger would: with only the client key, on an app that has never had a push accepted, 4,000
        // made-up push-to-start tokens under fresh device ids from 80 addresses; then 10 real phones register and a
        // start goes to everyone. Its first two pages (2,000 each) are all made-up tokens, which held the app before.
        let configuration = LivecastAPI.Configuration(trustedProxies: try TrustedProxies(parsing: "127.0.0.1/32, ::1"))
        try await APIFixture.withEmulator("stranger_prelaunch", configuration: configuration, testing: .live) {
            fixture,
            client,
            emulator,
            dispatcher in
            try await Self.feed("game-1", fixture, client)
            let junk = try await Self.madeUpTokens(4_000, fixture, client, addresses: 80)
            let phones = try await Self.realPhones(10, fixture, client, emulator)
            #expect(
                try await Apps(client: fixture.client, masterKey: nil, logger: fixture.store.logger).credentialsProven(id: fixture.store.appID)
                    == false
            )
            try await Self.start("game-1", fixture, client)
            #expect(try await dispatcher.drain() >= 1)

            #expect(try await Self.isHeld(fixture) == false, "made-up tokens held the app")
            for phone in phones {
                #expect(emulator.emulator.device(id: phone)?.activities.count == 1, "phone \(phone) got its start")
            }
            // The refusals before the proof were sent again once the phones proved the app, and invalidated then.
            #expect(try await fixture.count("push_to_start_tokens WHERE invalidated_at IS NOT NULL") == junk.count)
            #expect(try await fixture.count("push_to_start_tokens WHERE invalidated_at IS NULL AND NOT unproven") == phones.count)
            #expect(try await fixture.count("owed_pushes") == 0)
            #expect(try await fixture.count("apps WHERE credentials_doubt IS NOT NULL") == 0, "the proof cleared the doubt")

            // The next start reaches the phones only.
            try await Self.feed("game-2", fixture, client)
            try await Self.start("game-2", fixture, client)
            #expect(try await dispatcher.drain() >= 1)
            for phone in phones {
                #expect(emulator.emulator.device(id: phone)?.activities.count == 2, "phone \(phone) got both starts")
            }
            let records = emulator.emulator.wireRecords
            let junkTargets = Set(junk.map { "device:\($0)" })
            let sentToJunk = Dictionary(grouping: records.filter { junkTargets.contains($0.target) }, by: \.target).mapValues(\.count)
            #expect(
                sentToJunk.count == junk.count && sentToJunk.values.allSatisfy { $0 == 2 },
                "each made-up token: once before the proof, once after"
            )
            let verdict = WireJudge.judge(records)
            #expect(verdict.orderingViolations.isEmpty && verdict.sentAfterEnd.isEmpty, "at the wire: \(verdict)")
            #expect(verdict.accepted == 2 * phones.count, "\(verdict)")
        }
    }

    @Test func aWrongEnvironmentLosesNoTokenAndSaysSo() async throws {
        // A new app whose every token its phones reported themselves, and APNs refuses them all: a wrong environment
        // from the first push. Those tokens are only client keys' word, so they cannot hold the app; nor is one of them
        // invalidated, since no push proved the credentials: their starts wait, and the app's overview says why.
        try await APIFixture.withEmulator("stranger_wrong_environment") { fixture, client, emulator, dispatcher in
            try await Self.feed("game-1", fixture, client)
            let phones = try await Self.realPhones(25, fixture, client, emulator)
            var faults = FaultPlan()
            let refusedUntil = Int(Date().timeIntervalSince1970 * 1000) + 600_000
            for phone in phones {
                let token = try #require(emulator.emulator.device(id: phone)?.pushToStartTokens["GameAttributes"])
                faults.unregisteredTokens[token] = refusedUntil
            }
            emulator.emulator.setFaults(faults)
            try await Self.start("game-1", fixture, client)
            _ = try await dispatcher.drain()

            #expect(try await Self.isHeld(fixture) == false, "client keys' tokens never hold the app")
            #expect(try await fixture.count("push_to_start_tokens WHERE invalidated_at IS NOT NULL") == 0, "no token was lost")
            #expect(try await fixture.count("owed_pushes WHERE awaits_proof AND not_before = 'infinity'") == phones.count)
            let overview = try await client.send(.get, "\(Self.app)/overview", key: fixture.key(.backend))
            let problems = overview.json["problems"].items.compactMap(\.stringValue)
            #expect(
                problems.contains { $0.contains("25 of 25 pushes to tokens client keys registered") && $0.contains("sending:resume") },
                "\(problems)"
            )
            // Sending again refuses them again, and still loses nothing: they wait for the proof, not for a retry.
            #expect(try await dispatcher.drain() == 0)
            #expect(emulator.emulator.wireRecords.count == phones.count)

            // The environment is put right, and an admin says so.
            emulator.emulator.setFaults(FaultPlan())
            let resumed = try await client.send(.post, "\(Self.app)/sending:resume", key: fixture.key(.admin))
            #expect(resumed.status == .ok, "\(resumed.text)")
            _ = try await dispatcher.drain()
            for phone in phones {
                #expect(emulator.emulator.device(id: phone)?.activities.count == 1, "phone \(phone) got its start after the fix")
            }
            #expect(try await fixture.count("push_to_start_tokens WHERE invalidated_at IS NULL AND NOT unproven") == phones.count)
            #expect(try await fixture.count("apps WHERE credentials_doubt IS NOT NULL") == 0)
            let verdict = WireJudge.judge(emulator.emulator.wireRecords)
            #expect(verdict.orderingViolations.isEmpty && verdict.sentAfterEnd.isEmpty, "at the wire: \(verdict)")
            #expect(verdict.requests == 2 * phones.count && verdict.accepted == phones.count, "refused once, then accepted: \(verdict)")
        }
    }

    // MARK: - Users

    @Test func aUserIdNeedsAnAssertionTheAppsBackendSigned() async throws {
        try await APIFixture.with("stranger_user") { fixture, client in
            let signer = IdentityAssertionSigner(keyID: "backend-2026")
            let path = "\(Self.app)/push-to-start-tokens/phone-1/GameAttributes"
            let phone: HTTPFields = [ClientKeys.deviceHeader: "phone-1"]
            let register = { (body: String) in try await client.send(.put, path, key: fixture.key(.client), body: body, headers: phone) }

            let bare = try await register(#"{"token": "aabb", "userId": "bob"}"#)
            #expect(bare.status == .forbidden && bare.errorCode == "user_assertion_required", "\(bare.text)")
            #expect(try await fixture.count("push_to_start_tokens") == 0, "a refusal writes nothing")
            let early = try await register(
                #"{"token": "aabb", "userId": "bob", "userAssertion": "\#(try signer.sign(user: "bob", device: "phone-1"))"}"#
            )
            #expect(early.errorCode == "invalid_user_assertion", "no identity key yet: \(early.text)")

            // The admin registers the backend's public key.
            let keyPath = "\(Self.app)/identity-keys/backend-2026"
            let badKey = try await client.send(.put, keyPath, key: fixture.key(.admin), body: #"{"publicKey": "not a key"}"#)
            #expect(badKey.status == .unprocessableContent && badKey.errorField == "publicKey")
            let pem = signer.publicKeyPEM.replacingOccurrences(of: "\n", with: "\\n")
            let added = try await client.send(.put, keyPath, key: fixture.key(.admin), body: #"{"publicKey": "\#(pem)"}"#)
            #expect(added.status == .created, "\(added.text)")
            let byBackend = try await client.send(.put, keyPath, key: fixture.key(.backend), body: #"{"publicKey": "\#(pem)"}"#)
            #expect(byBackend.status == .forbidden)
            let listed = try await client.send(.get, "\(Self.app)/identity-keys", key: fixture.key(.admin))
            let listedKeys: [JSONValue]? =
                if case .array(let keys) = listed.json["identityKeys"] { keys } else { nil }
            #expect(listedKeys?.first?["keyId"] == .string("backend-2026"), "\(listed.text)")

            let now = Int(Date().timeIntervalSince1970)
            let stranger = IdentityAssertionSigner(keyID: "backend-2026")
            let refused: [(String, String)] = [
                ("another key's signature", try stranger.sign(user: "bob", device: "phone-1")),
                (
                    "an unknown key id",
                    try signer.sign(["sub": "bob", "aud": "com.example.game", "deviceId": "phone-1", "exp": now + 300], keyID: "other")
                ),
                ("expired", try signer.sign(user: "bob", device: "phone-1", expiresIn: -120)),
                ("another app", try signer.sign(user: "bob", device: "phone-1", audience: "com.example.other")),
                ("another user", try signer.sign(user: "alice", device: "phone-1")),
                ("two days long", try signer.sign(user: "bob", device: "phone-1", expiresIn: 2 * 86_400)),
                ("no exp", try signer.sign(["sub": "bob", "aud": "com.example.game", "deviceId": "phone-1"])),
                ("another device", try signer.sign(user: "bob", device: "phone-2")),
                ("no device: it would bind bob on any device", try signer.sign(user: "bob", device: nil)),
                ("not yet valid", try signer.sign(user: "bob", device: "phone-1", extra: ["nbf": now + 600])),
                ("not a JWT", "eyJhbGciOiJFUzI1NiJ9.e30"),
            ]
            for (why, assertion) in refused {
                let answer = try await register(#"{"token": "aabb", "userId": "bob", "userAssertion": "\#(assertion)"}"#)
                #expect(answer.status == .forbidden && answer.errorCode == "invalid_user_assertion", "\(why): \(answer.text)")
                #expect(answer.errorField == "userAssertion")
            }
            #expect(try await fixture.count("push_to_start_tokens") == 0)

            let bound = try await register(
                #"{"token": "aabb", "userId": "bob", "userAssertion": "\#(try signer.sign(user: "bob", device: "phone-1", extra: ["iat": now, "nbf": now - 5]))"}"#
            )
            #expect(bound.status == .created, "\(bound.text)")
            #expect(try await fixture.count("push_to_start_tokens WHERE user_id = 'bob' AND unproven") == 1)
            // The assertion alone binds its subject; a registration without a user unbinds (a PUT replaces).
            #expect(try await register(#"{"token": "aabb", "userAssertion": "\#(try signer.sign(user: "carol", device: "phone-1"))"}"#).status == .ok)
            #expect(try await fixture.count("push_to_start_tokens WHERE user_id = 'carol'") == 1)
            #expect(try await register(#"{"token": "aabb"}"#).status == .ok)
            #expect(try await fixture.count("push_to_start_tokens WHERE user_id IS NULL") == 1)

            // A backend key still names users on its own word; removing the identity key ends its assertions.
            let backend = try await client.send(
                .put,
                "\(Self.app)/push-to-start-tokens/phone-9/GameAttributes",
                key: fixture.key(.backend),
                body: #"{"token": "ccdd", "userId": "dave"}"#
            )
            #expect(backend.status == .created, "\(backend.text)")
            #expect(try await client.send(.delete, keyPath, key: fixture.key(.admin)).status == .noContent)
            let afterRemoval = try await register(
                #"{"token": "aabb", "userId": "bob", "userAssertion": "\#(try signer.sign(user: "bob", device: "phone-1"))"}"#
            )
            #expect(afterRemoval.errorCode == "invalid_user_assertion")
        }
    }

    @Test func aStartForAUserReachesOnlyTheDeviceItsBackendVouchedFor() async throws {
        try await APIFixture.withEmulator("stranger_impersonation") { fixture, client, emulator, dispatcher in
            let signer = IdentityAssertionSigner(keyID: "k1")
            let pem = signer.publicKeyPEM.replacingOccurrences(of: "\n", with: "\\n")
            let added = try await client.send(.put, "\(Self.app)/identity-keys/k1", key: fixture.key(.admin), body: #"{"publicKey": "\#(pem)"}"#)
            #expect(added.status == .created, "\(added.text)")
            try await Self.feed("game-1", fixture, client)
            var phones: [String] = []
            for _ in 0..<2 {
                let device = try emulator.emulator.addDevice(
                    bundleID: EmulatorFixture.bundleID,
                    osVersion: "17.5",
                    pushToStartTokens: ["GameAttributes": ""]
                )
                phones.append(device.id)
            }
            let token = { (phone: String) in emulator.emulator.device(id: phone)?.pushToStartTokens["GameAttributes"] ?? "" }
            let register = { (phone: String, body: String) in
                try await client.send(
                    .put,
                    "\(Self.app)/push-to-start-tokens/\(phone)/GameAttributes",
                    key: fixture.key(.client),
                    body: body,
                    headers: [ClientKeys.deviceHeader: phone]
                )
            }
            // The stranger's phone claims to be Bob's; Bob's own phone proves it.
            let claimed = try await register(phones[0], #"{"token": "\#(token(phones[0]))", "userId": "bob"}"#)
            #expect(claimed.errorCode == "user_assertion_required")
            #expect(try await register(phones[0], #"{"token": "\#(token(phones[0]))"}"#).status == .created)
            let proven = try await register(
                phones[1],
                #"{"token": "\#(token(phones[1]))", "userId": "bob", "userAssertion": "\#(try signer.sign(user: "bob", device: phones[1]))"}"#
            )
            #expect(proven.status == .created, "\(proven.text)")

            try await Self.start("game-1", fixture, client, audience: #"{"userIds": ["bob"]}"#)
            #expect(try await dispatcher.drain() >= 1)
            #expect(emulator.emulator.device(id: phones[0])?.activities.isEmpty == true, "the stranger got Bob's start")
            #expect(emulator.emulator.device(id: phones[1])?.activities.count == 1, "Bob got his start")
        }
    }

    // MARK: - Feeds

    @Test func aClientKeyLearnsNothingOfFeedsItCannotFollow() async throws {
        try await APIFixture.with("stranger_feeds") { fixture, client in
            try await Self.feed("game-1", fixture, client)
            try await Self.feed("delivery-7", fixture, client, attributesType: "DeliveryAttributes")
            try await Self.feed("game-0", fixture, client)
            try await fixture.client.query("UPDATE feeds SET state = 'ended' WHERE feed_key = 'game-0'")
            var answers: [String] = []
            for (index, feed) in ["no-such-feed", "delivery-7", "game-0"].enumerated() {
                let phone = "phone-\(index)"
                let answer = try await client.send(
                    .put,
                    "\(Self.app)/activities/act-\(index)",
                    key: fixture.key(.client),
                    body: #"{"attributesType": "GameAttributes", "feed": "\#(feed)"}"#,
                    headers: [ClientKeys.deviceHeader: phone]
                )
                #expect(answer.status == .notFound && answer.errorField == "feed", "\(feed): \(answer.text)")
                answers.append(answer.text.replacingOccurrences(of: feed, with: "FEED"))
            }
            #expect(Set(answers).count == 1, "one answer for every feed a client key cannot follow: \(answers)")
            #expect(try await fixture.count("activities") == 0)
            // A backend key is told why.
            let backend = try await client.send(
                .put,
                "\(Self.app)/activities/act-9",
                key: fixture.key(.backend),
                body: #"{"attributesType": "GameAttributes", "feed": "game-0"}"#
            )
            #expect(backend.status == .conflict, "\(backend.text)")
        }
    }

    // MARK: - Limits that bind strangers

    @Test func newClientDevicesAreCappedPerAppAcrossInstances() async throws {
        let configuration = LivecastAPI.Configuration(clientLimits: ClientLimits(newDevicesPerHour: 3))
        try await APIFixture.with("stranger_new_devices", configuration: configuration) { fixture, client in
            let register = { (index: Int, token: String) in
                try await client.send(
                    .put,
                    "\(Self.app)/push-to-start-tokens/phone-\(index)/GameAttributes",
                    key: fixture.key(.client),
                    body: #"{"token": "\#(token)"}"#,
                    headers: [ClientKeys.deviceHeader: "phone-\(index)"]
                )
            }
            // A registration refused before its device is admitted does not count it.
            #expect(try await register(9, "not hex").status == .unprocessableContent)
            for index in 0..<3 {
                let answer = try await register(index, "aa0\(index)")
                #expect(answer.status == .created, "\(answer.text)")
            }
            let fourth = try await register(3, "aa03")
            #expect(fourth.status == .tooManyRequests && fourth.errorCode == "rate_limited", "\(fourth.text)")
            let retryAfter = try #require(fourth.headers[.retryAfter].flatMap(Int.init))
            #expect(retryAfter >= 1 && retryAfter <= 3600)
            #expect(try await fixture.count("push_to_start_tokens WHERE device_id = 'phone-3'") == 0)
            // A device the app knows is never held back by the ceiling.
            let again = try await register(0, "aa00")
            #expect(again.status == .ok, "\(again.text)")
        }
        // Two instances (two pools on one PostgreSQL) racing for the last places admit no more than the ceiling.
        try await APIFixture.with("stranger_new_devices_race") { fixture, _ in
            let gates = [
                ClientGate(client: fixture.client, logger: fixture.store.logger), ClientGate(client: fixture.database, logger: fixture.store.logger),
            ]
            let admitted = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<40 {
                    group.addTask {
                        let request = ClientGate.Request(
                            appID: fixture.store.appID,
                            deviceID: "device-\(index)",
                            address: "198.51.100.\(index % 4)",
                            perDevice: .init(ratePerSecond: 1, burst: 60),
                            perAddress: .init(ratePerSecond: 10, burst: 600),
                            admission: .init(isVouched: false, ceiling: 10, addressShare: 100)
                        )
                        return try await gates[index % 2].pass(request) == nil
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(admitted == 10)
            #expect(try await fixture.count("client_devices") == 10)
        }
    }

    @Test func oneAddressCannotTakeTheNewDeviceCeilingFromOthers() async throws {
        // #66 §2, as a stranger would: the app's ceiling at 300, one address registers 400 new devices. It gets its
        // share (5 %, 15 devices), and real phones from other addresses, or vouched for by the app's backend from that
        // very address, still register.
        let configuration = LivecastAPI.Configuration(
            trustedProxies: try TrustedProxies(parsing: "127.0.0.1/32, ::1"),
            clientLimits: ClientLimits(newDevicesPerHour: 300)
        )
        try await APIFixture.with("stranger_address_share", configuration: configuration, testing: .live) { fixture, client in
            let signer = IdentityAssertionSigner(keyID: "k1")
            let pem = signer.publicKeyPEM.replacingOccurrences(of: "\n", with: "\\n")
            #expect(
                try await client.send(.put, "\(Self.app)/identity-keys/k1", key: fixture.key(.admin), body: #"{"publicKey": "\#(pem)"}"#).status
                    == .created
            )
            let register = { (device: String, address: String, extra: String) in
                try await client.send(
                    .put,
                    "\(Self.app)/push-to-start-tokens/\(device)/GameAttributes",
                    key: fixture.key(.client),
                    body: #"{"token": "\#(device.utf8.map { String(format: "%02x", $0) }.joined())"\#(extra)}"#,
                    headers: [ClientKeys.deviceHeader: device, Self.forwardedFor: address]
                )
            }
            var answers: [HTTPResponse.Status] = []
            for index in 0..<400 {
                answers.append(try await register("stranger-\(index)", "203.0.113.7", "").status)
            }
            #expect(answers.filter { $0 == .created }.count == 15, "the address got its share only")
            let refused = try await register("stranger-400", "203.0.113.7", "")
            #expect(refused.status == .tooManyRequests && refused.errorCode == "rate_limited", "\(refused.text)")
            #expect(refused.text.contains("share"), "\(refused.text)")
            // An IPv6 stranger gets one share per /64, however many addresses it picks in it.
            var fromIPv6: [HTTPResponse.Status] = []
            for index in 0..<20 {
                fromIPv6.append(try await register("v6-\(index)", "2001:db8:1:2::\(String(index, radix: 16))", "").status)
            }
            #expect(fromIPv6.filter { $0 == .created }.count == 15)
            for index in 0..<10 {
                let phone = try await register("phone-\(index)", "192.0.2.\(index)", "")
                #expect(phone.status == .created, "a real phone from another address: \(phone.text)")
            }
            let assertion = try signer.sign(user: "bob", device: "bobs-phone")
            let vouched = try await register("bobs-phone", "203.0.113.7", #", "userId": "bob", "userAssertion": "\#(assertion)""#)
            #expect(vouched.status == .created, "a registration its backend vouched for: \(vouched.text)")
            #expect(try await fixture.count("client_devices WHERE address = '203.0.113.7' AND NOT vouched") == 15)
        }
    }

    @Test func theRequestBucketsHoldAcrossInstances() async throws {
        // Another instance (another pool on the same PostgreSQL) spent this device's and this address's requests: this
        // instance, which has seen none of them, refuses the next one too.
        let configuration = LivecastAPI.Configuration(
            trustedProxies: try TrustedProxies(parsing: "127.0.0.1/32, ::1"),
            clientLimits: ClientLimits(perDevice: .init(ratePerSecond: 0.001, burst: 3), perAddress: .init(ratePerSecond: 0.001, burst: 5))
        )
        try await APIFixture.with("stranger_shared_buckets", configuration: configuration, testing: .live) { fixture, client in
            let other = ClientGate(client: fixture.database, logger: fixture.store.logger)
            let request = { (device: String) in
                ClientGate.Request(
                    appID: fixture.store.appID,
                    deviceID: device,
                    address: "203.0.113.9",
                    perDevice: .init(ratePerSecond: 0.001, burst: 3),
                    perAddress: .init(ratePerSecond: 0.001, burst: 5)
                )
            }
            for _ in 0..<3 { #expect(try await other.pass(request("phone-1")) == nil) }
            let send = { (device: String, address: String) in
                try await client.send(
                    .delete,
                    "\(Self.app)/activities/none",
                    key: fixture.key(.client),
                    headers: [ClientKeys.deviceHeader: device, Self.forwardedFor: address]
                )
            }
            let device = try await send("phone-1", "198.51.100.1")
            #expect(device.status == .tooManyRequests && device.text.contains("device"), "\(device.text)")
            #expect(try await send("phone-2", "198.51.100.1").status == .notFound, "another device")
            for _ in 0..<2 { #expect(try await other.pass(request("phone-3")) == nil) }
            let address = try await send("phone-4", "203.0.113.9")
            #expect(address.status == .tooManyRequests && address.text.contains("address"), "\(address.text)")
        }
    }

    @Test func anIPv6AddressIsLimitedByItsSlash64() {
        let key = AddressBlock.rateLimitKey(of:)
        #expect(key("2001:db8:1:2:aaaa::1") == key("2001:db8:1:2:ffff:ffff:ffff:ffff"))
        #expect(key("2001:db8:1:2::1") == "2001:db8:1:2::/64")
        #expect(key("2001:db8:1:3::1") != key("2001:db8:1:2::1"))
        #expect(key("[2001:db8:1:2::7]") == "2001:db8:1:2::/64")
        #expect(key("192.0.2.7") == "192.0.2.7")
        #expect(key("::ffff:192.0.2.7") == "192.0.2.7")
        #expect(key("192.0.2.8") != key("192.0.2.7"))
    }

    // MARK: - Helpers

    private static func feed(
        _ key: String,
        _ fixture: APIFixture,
        _ client: any TestClientProtocol,
        attributesType: String = "GameAttributes"
    )
        async throws
    {
        let feed = try await client.send(
            .put,
            "\(Self.app)/feeds/\(key)",
            key: fixture.key(.operator),
            body: #"{"attributesType": "\#(attributesType)", "attributes": {"home": "Giants"}}"#
        )
        #expect(feed.status == .created, "\(feed.text)")
    }

    private static func start(
        _ feed: String,
        _ fixture: APIFixture,
        _ client: any TestClientProtocol,
        audience: String = #"{"everyone": true}"#
    )
        async throws
    {
        let start = try await client.send(
            .post,
            "\(Self.app)/feeds/\(feed)/start",
            key: fixture.key(.backend),
            body: #"{"contentState": {"home": 0}, "alert": {"title": "Kick-off"}, "audience": \#(audience)}"#
        )
        #expect(start.status == .accepted, "\(start.text)")
    }

    /// Emulator iPhones on iOS 17.5, each reporting its push-to-start token with the client key, as LivecastKit does.
    private static func realPhones(
        _ count: Int,
        _ fixture: APIFixture,
        _ client: any TestClientProtocol,
        _ emulator: EmulatorFixture
    )
        async throws -> [String]
    {
        var phones: [String] = []
        for _ in 0..<count {
            let device = try emulator.emulator.addDevice(
                bundleID: EmulatorFixture.bundleID,
                osVersion: "17.5",
                pushToStartTokens: ["GameAttributes": ""]
            )
            let token = try #require(device.pushToStartTokens["GameAttributes"])
            let answer = try await client.send(
                .put,
                "\(Self.app)/push-to-start-tokens/\(device.id)/GameAttributes",
                key: fixture.key(.client),
                body: #"{"token": "\#(token)", "osVersion": "17.5"}"#,
                headers: [ClientKeys.deviceHeader: device.id]
            )
            #expect(answer.status == .created, "\(answer.text)")
            phones.append(device.id)
        }
        return phones
    }

    /// Made-up push-to-start tokens, each under a fresh device id, registered with the client key, in turn from
    /// `addresses` client addresses (`X-Forwarded-For`, for a fixture that trusts the test client as a proxy).
    private static func madeUpTokens(
        _ count: Int,
        _ fixture: APIFixture,
        _ client: any TestClientProtocol,
        from first: Int = 0,
        addresses: Int = 1
    )
        async throws -> [String]
    {
        var tokens: [String] = []
        for index in first..<(first + count) {
            let token = String(format: "%064x", 0xdead_0000 + index)
            let answer = try await client.send(
                .put,
                "\(Self.app)/push-to-start-tokens/stranger-\(index)/GameAttributes",
                key: fixture.key(.client),
                body: #"{"token": "\#(token)", "osVersion": "17.5"}"#,
                headers: [ClientKeys.deviceHeader: "stranger-\(index)", Self.forwardedFor: "198.51.100.\(index % addresses)"]
            )
            #expect(answer.status == .created, "\(answer.text)")
            tokens.append(token)
        }
        return tokens
    }

    private static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    private static func isHeld(_ fixture: APIFixture) async throws -> Bool {
        let app = try #require(try await Apps(client: fixture.client, masterKey: nil, logger: fixture.store.logger).app(id: fixture.store.appID))
        return app.sendingHeld != nil
    }
}
