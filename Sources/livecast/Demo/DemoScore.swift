import LivecastCore

/// The demo game's `ContentState`: `{"home": 1, "away": 0, "minute": 12}`.
struct DemoScore: Sendable, Hashable {
    var home: Int
    var away: Int
    var minute: Int

    /// The content state as the backend sends it and the devices show it.
    var json: JSONValue {
        .object(["home": .int(self.home), "away": .int(self.away), "minute": .int(self.minute)])
    }

    /// `1-0 12'`.
    var text: String { "\(self.home)-\(self.away) \(self.minute)'" }

    init(home: Int, away: Int, minute: Int) {
        self.home = home
        self.away = away
        self.minute = minute
    }

    /// The score a device shows, or `nil` for any other content.
    init?(json: JSONValue) {
        guard let home = json["home"]?.intValue, let away = json["away"]?.intValue, let minute = json["minute"]?.intValue else { return nil }
        self.init(home: home, away: away, minute: minute)
    }
}
