import LivecastCore

extension Feeds.Renewal: Encodable {
    private enum CodingKeys: String, CodingKey {
        case before, ifUpdatedWithin, alert
    }

    /// As the API shows it: `{"before": 1800, "ifUpdatedWithin": 7200, "alert": …}`, seconds, and the alert in the
    /// API's shape (`locKey`, `locArgs`).
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.before.wholeSeconds, forKey: .before)
        try container.encode(self.ifUpdatedWithin.wholeSeconds, forKey: .ifUpdatedWithin)
        try container.encodeIfPresent(self.alert.map(APIAlert.init), forKey: .alert)
    }
}

/// An alert as the API writes it (the shape its requests take), not as APNs gets it.
private struct APIAlert: Encodable {
    let alert: LiveActivityAlert

    private enum CodingKeys: String, CodingKey {
        case title, body, sound
    }

    private enum LocalizedKeys: String, CodingKey {
        case locKey, locArgs
    }

    private enum CriticalKeys: String, CodingKey {
        case critical, name, volume
    }

    init(_ alert: LiveActivityAlert) { self.alert = alert }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        for (key, text) in [(CodingKeys.title, self.alert.title), (.body, self.alert.body)] {
            switch text {
            case .none:
                break
            case .text(let value):
                try container.encode(value, forKey: key)
            case .localized(let locKey, let arguments):
                var localized = container.nestedContainer(keyedBy: LocalizedKeys.self, forKey: key)
                try localized.encode(locKey, forKey: .locKey)
                try localized.encode(arguments, forKey: .locArgs)
            }
        }
        switch self.alert.sound {
        case .none:
            break
        case .named(let name):
            try container.encode(name, forKey: .sound)
        case .critical(let name, let volume):
            var critical = container.nestedContainer(keyedBy: CriticalKeys.self, forKey: .sound)
            try critical.encode(true, forKey: .critical)
            try critical.encode(name, forKey: .name)
            try critical.encode(volume, forKey: .volume)
        }
    }
}
