import LivecastCore

/// An update's `alert`, shaped like ``LiveActivityAlert``:
/// `{"title": "Goal!", "body": {"locKey": "GOAL", "locArgs": ["Giants"]}, "sound": "default"}`. Each text is a
/// string or a localized form; `sound` is a file name or `{"critical": true, "name": "…", "volume": 0.8}`.
///
/// Only what ActivityKit documents for a Live Activity alert is taken: any other key (`subtitle`, say) is refused
/// `422`, naming it, rather than sent to a device that would discard the whole push.
struct AlertBody: Decodable {
    let title: TextBody?
    let body: TextBody?
    let sound: SoundBody?

    var alert: LiveActivityAlert {
        LiveActivityAlert(title: self.title?.text, body: self.body?.text, sound: self.sound?.sound)
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case title, body, sound
    }

    init(from decoder: any Decoder) throws {
        try UndocumentedKeys.refuse(in: decoder, allowing: CodingKeys.allCases.map(\.rawValue), what: "a Live Activity alert")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.title = try container.decodeIfPresent(TextBody.self, forKey: .title)
        self.body = try container.decodeIfPresent(TextBody.self, forKey: .body)
        self.sound = try container.decodeIfPresent(SoundBody.self, forKey: .sound)
    }

    /// Literal text, or a localization key with arguments.
    struct TextBody: Decodable {
        let text: LiveActivityAlert.Text

        private struct Localized: Decodable {
            let locKey: String
            let locArgs: [String]?

            private enum CodingKeys: String, CodingKey, CaseIterable {
                case locKey, locArgs
            }

            init(from decoder: any Decoder) throws {
                try UndocumentedKeys.refuse(in: decoder, allowing: CodingKeys.allCases.map(\.rawValue), what: "localized alert text")
                let container = try decoder.container(keyedBy: CodingKeys.self)
                self.locKey = try container.decode(String.self, forKey: .locKey)
                self.locArgs = try container.decodeIfPresent([String].self, forKey: .locArgs)
            }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let literal = try? container.decode(String.self) {
                self.text = .text(literal)
            } else {
                let localized = try container.decode(Localized.self)
                self.text = .localized(key: localized.locKey, arguments: localized.locArgs ?? [])
            }
        }
    }

    /// A named sound, or a critical alert sound.
    struct SoundBody: Decodable {
        let sound: LiveActivityAlert.Sound

        private struct Critical: Decodable {
            let critical: Bool
            let name: String
            let volume: Double
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let name = try? container.decode(String.self) {
                self.sound = .named(name)
                return
            }
            let critical = try container.decode(Critical.self)
            guard critical.critical, (0...1).contains(critical.volume) else {
                throw DecodingError.dataCorruptedError(
                    in: container,
                    debugDescription: "a critical sound is {\"critical\": true, \"name\", \"volume\" from 0 to 1}"
                )
            }
            self.sound = .critical(name: critical.name, volume: critical.volume)
        }
    }
}
