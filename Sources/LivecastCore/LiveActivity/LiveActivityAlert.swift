/// The `alert` of a Live Activity push. Required on start; on update or end it lights up the device.
public struct LiveActivityAlert: Sendable, Hashable {
    /// The title, as text or a localization key.
    public var title: Text?
    /// The subtitle, as text or a localization key.
    public var subtitle: Text?
    /// The body, as text or a localization key.
    public var body: Text?
    /// The sound to play.
    public var sound: Sound?

    /// Creates an alert.
    /// - Parameters:
    ///   - title: The title. Defaults to none.
    ///   - subtitle: The subtitle. Defaults to none.
    ///   - body: The body. Defaults to none.
    ///   - sound: The sound. Defaults to none.
    public init(title: Text? = nil, subtitle: Text? = nil, body: Text? = nil, sound: Sound? = nil) {
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.sound = sound
    }

    /// Alert text: literal, or a key into the app's `Localizable.strings` with format arguments.
    public enum Text: Sendable, Hashable, ExpressibleByStringLiteral {
        /// Literal text.
        case text(String)
        /// A localization key (`*-loc-key`) and its arguments (`*-loc-args`).
        case localized(key: String, arguments: [String])

        public init(stringLiteral value: String) {
            self = .text(value)
        }
    }

    /// An alert sound: a sound file's name (`"default"` for the system sound) or a critical alert.
    public enum Sound: Sendable, Hashable {
        /// A sound file in the app bundle, or `"default"`.
        case named(String)
        /// A critical alert sound, played even when the device is muted: `{"critical": 1, "name": …, "volume": …}`.
        case critical(name: String, volume: Double)
    }
}

extension LiveActivityAlert {
    /// Writes the alert as the value of `aps.alert`. The sound is written beside it by the payload.
    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        Self.write(self.title, text: "title", key: "title-loc-key", arguments: "title-loc-args", to: &writer)
        Self.write(self.subtitle, text: "subtitle", key: "subtitle-loc-key", arguments: "subtitle-loc-args", to: &writer)
        Self.write(self.body, text: "body", key: "loc-key", arguments: "loc-args", to: &writer)
        if let sound = self.sound {
            writer.key("sound")
            switch sound {
            case .named(let name):
                writer.string(name)
            case .critical(let name, let volume):
                writer.beginObject()
                writer.key("critical")
                writer.int(1)
                writer.key("name")
                writer.string(name)
                writer.key("volume")
                writer.number(volume)
                writer.endObject()
            }
        }
        writer.endObject()
    }

    private static func write(
        _ value: Text?,
        text textKey: String,
        key locKey: String,
        arguments argsKey: String,
        to writer: inout JSONWriter
    ) {
        switch value {
        case .none:
            break
        case .text(let text):
            writer.key(textKey)
            writer.string(text)
        case .localized(let key, let arguments):
            writer.key(locKey)
            writer.string(key)
            if !arguments.isEmpty {
                writer.key(argsKey)
                writer.stringArray(arguments)
            }
        }
    }

    /// Reads an `aps.alert` value; `nil` when it is not an object of the documented shape.
    init?(json: JSONValue) {
        guard let members = json.objectValue else { return nil }
        func text(_ textKey: String, _ locKey: String, _ argsKey: String) -> Text? {
            if let text = members[textKey]?.stringValue { return .text(text) }
            guard let key = members[locKey]?.stringValue else { return nil }
            let arguments: [String]
            if case .array(let values) = members[argsKey] {
                arguments = values.compactMap(\.stringValue)
            } else {
                arguments = []
            }
            return .localized(key: key, arguments: arguments)
        }
        self.title = text("title", "title-loc-key", "title-loc-args")
        self.subtitle = text("subtitle", "subtitle-loc-key", "subtitle-loc-args")
        self.body = text("body", "loc-key", "loc-args")
        switch members["sound"] {
        case .string(let name):
            self.sound = .named(name)
        case .object(let sound):
            self.sound = .critical(name: sound["name"]?.stringValue ?? "default", volume: sound["volume"]?.doubleValue ?? 1)
        default:
            self.sound = nil
        }
    }
}
