import APNs
import LivecastCore
import Testing

/// The push types' wire spellings and topics, written out so a change to either shows here first.
@Suite struct APNsPushTypeTests {
    static let documented: [(APNsPushType, header: String, topic: String?)] = [
        (.alert, "alert", "com.example.game"),
        (.background, "background", "com.example.game"),
        (.location, "location", "com.example.game.location-query"),
        (.voip, "voip", "com.example.game.voip"),
        (.complication, "complication", "com.example.game.complication"),
        (.fileprovider, "fileprovider", "com.example.game.pushkit.fileprovider"),
        (.mdm, "mdm", nil),
        (.liveactivity, "liveactivity", "com.example.game.push-type.liveactivity"),
        (.pushtotalk, "pushtotalk", "com.example.game.voip-ptt"),
        (.widgets, "widgets", "com.example.game.push-type.widgets"),
        (.controls, "controls", "com.example.game.push-type.controls"),
    ]

    @Test func headerValuesAreApplesSpellingAndParseBack() {
        for (pushType, header, _) in Self.documented {
            #expect(pushType.headerValue == header)
            #expect(pushType.description == header)
            #expect(APNsPushType(headerValue: header) == pushType)
        }
        #expect(Set(Self.documented.map(\.0)).count == Self.documented.count)
    }

    @Test func unknownAndMisspelledValuesDoNotParse() {
        for value in ["", "liveactivities", "LiveActivity", "Liveactivity", "ALERT", " alert", "alert ", "push-type.liveactivity"] {
            #expect(APNsPushType(headerValue: value) == nil, "\(value)")
        }
    }

    @Test func topicsCarryEachTypesSuffix() {
        for (pushType, header, topic) in Self.documented {
            #expect(pushType.topic(forBundleID: "com.example.game") == topic, "\(header)")
            #expect(topic.flatMap { pushType.bundleID(fromTopic: $0) } == topic.map { _ in "com.example.game" }, "\(header)")
        }
    }

    @Test func bundleIDFromTopicNeedsTheSuffix() {
        #expect(APNsPushType.liveactivity.bundleID(fromTopic: "com.example.game") == nil)
        #expect(APNsPushType.liveactivity.bundleID(fromTopic: "com.example.game.push-type.widgets") == nil)
        #expect(APNsPushType.liveactivity.bundleID(fromTopic: ".push-type.liveactivity") == "")
        #expect(APNsPushType.alert.bundleID(fromTopic: "com.example.game.push-type.liveactivity") == "com.example.game.push-type.liveactivity")
        #expect(APNsPushType.mdm.bundleID(fromTopic: "com.apple.mgmt.External.1234") == nil)
    }

    @Test func devicePushesDefaultToLiveActivityAndDeriveTheirTopic() {
        let push = DevicePush(deviceToken: "abcd", bundleID: "com.example.game", payload: [])
        #expect(push.pushType == .liveactivity)
        #expect(push.topic == "com.example.game.push-type.liveactivity")
        #expect(DevicePush(deviceToken: "abcd", bundleID: "com.example.game", payload: [], pushType: .alert).topic == "com.example.game")
        #expect(
            DevicePush(deviceToken: "abcd", bundleID: "com.example.game", payload: [], pushType: .widgets).topic
                == "com.example.game.push-type.widgets"
        )
        #expect(
            DevicePush(deviceToken: "abcd", bundleID: "com.apple.mgmt.External.1234", payload: [], pushType: .mdm).topic
                == "com.apple.mgmt.External.1234"
        )
    }
}
