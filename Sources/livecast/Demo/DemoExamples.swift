/// What `livecast demo --keep` prints after the game: the running stack's addresses and keys, the console's link,
/// and curl commands that work against it as they are.
struct DemoExamples: Sendable {
    let serverPort: Int
    let app: DemoApp
    let emulatorPushPort: Int
    /// The emulator's certificate (PEM).
    let emulatorCertificate: String

    var text: String {
        let api = "http://127.0.0.1:\(self.serverPort)/v1/apps/\(DemoApp.bundleID)"
        let backend = "-H 'authorization: Bearer \(self.app.backendKey)'"
        let `operator` = "-H 'authorization: Bearer \(self.app.operatorKey)'"
        return """

            The stack keeps running until Ctrl-C, which stops it and removes what it made.
              console       http://127.0.0.1:\(self.serverPort)/console (sign in with the operator key)
              API           http://127.0.0.1:\(self.serverPort) (its contract: /openapi.yaml)
              backend key   \(self.app.backendKey)
              operator key  \(self.app.operatorKey)

            # The finished game's feed:
            curl -s \(api)/feeds/\(DemoGame.feedKey) \(`operator`)
            # A new game on a broadcast channel, started on every registered iPhone:
            curl -s -X PUT \(api)/feeds/game-4712 \(`operator`) -d '{"attributesType": "\(DemoGame.attributesType)", "attributes": {"home": "Lions", "away": "Bears"}, "channel": {"storagePolicy": "noStorage"}}'
            curl -s -X POST \(api)/feeds/game-4712/start \(backend) -d '{"contentState": {"home": 0, "away": 0, "minute": 0}, "alert": {"title": "Kick-off"}, "audience": {"everyone": true}}'
            # A goal (iOS 18 iPhones follow the channel; the others' activities need registering with PUT /activities/{id}):
            curl -s -X POST \(api)/feeds/game-4712/updates \(backend) -d '{"contentState": {"home": 1, "away": 0, "minute": 9}, "alert": {"title": "Goal!"}}'
            # Apple's figures (from the emulator's data export) beside Livecast's; drawn at /console/delivery-report:
            curl -s \(api)/delivery-report \(backend)
            # What the simulated iPhones show:
            curl -s --cacert \(self.emulatorCertificate) https://localhost:\(self.emulatorPushPort)/emulator/devices
            """
    }
}
