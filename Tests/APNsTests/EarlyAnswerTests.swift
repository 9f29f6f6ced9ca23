import APNs
import Foundation
import LivecastTesting
import Testing

/// nginx with `return 200;` answers each stream before reading its body, then resets the request half: the
/// measured off-the-shelf Swift clients stalled and lost requests against it. Every request must complete.
@Suite struct EarlyAnswerTests {
    @Test(arguments: [80, 4000])
    func everyRequestCompletesAgainstAServerThatAnswersEarly(payloadSize: Int) async throws {
        try await NginxReturn200.with { nginx in
            var configuration = APNsClient.Configuration()
            configuration.pushEndpoint = .init(host: "localhost", port: nginx.port)
            configuration.additionalTrustRootFiles = [nginx.certificate]
            configuration.connectionsPerEndpoint = 2
            configuration.requestTimeout = .seconds(60)
            let key = try await ProviderKey.make()
            let client = try APNsClient(
                configuration: configuration,
                credentials: try APNsCredentials(teamID: key.teamID, keyID: key.keyID, p8File: key.path)
            )
            let payload = Array(
                #"{"aps":{"timestamp":1,"event":"update","content-state":{"p":"\#(String(repeating: "x", count: payloadSize - 60))"}}}"#.utf8
            )
            let pushes = (0..<3000).map { DevicePush(deviceToken: String(format: "%064x", $0), bundleID: "com.example.game", payload: payload) }
            let outcomes = await client.send(pushes)
            await client.shutdown()
            let failed = outcomes.filter { $0.status != 200 }
            #expect(failed.isEmpty, "\(failed.count) failed, first: \(failed.first.map { "\($0)" } ?? "")")
        }
    }
}
