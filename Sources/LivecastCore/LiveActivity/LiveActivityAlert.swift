import Foundation

/// The `alert` of a Live Activity push. Required on start; on update or end it lights up the device.
///
/// ActivityKit documents three keys: `title`, `body` and `sound`. Localized text nests under its own key,
/// `"title": {"loc-key": "GOAL_TITLE", "loc-args": ["Giants"]}`, not in the flat `title-loc-key` / `loc-key` keys of
/// ordinary alert notifications: a device silently discards a Live Activity push whose alert uses those.
public struct LiveActivityAlert: Sendable, Hashable {
    /// The title, as text or a localization key.
    public var title: Text?
    /// The body, as text or a localization key.
    public var body: Text?
    /// The sound to play.
    public var sound: Sound?

    /// Creates an alert.
    /// - Parameters:
    ///   - title: The title. Defaults to none.
    ///   - body: The body. Defaults to none.
    ///   - sound: The sound. Defaults to none.
    public init(title: Text? = nil, body: Text? = nil, sound: Sound? = nil) {
        self.title = title
        self.body = body
        self.sound = sound
    }

    /// Alert text: literal, or a key into the app's `Localizable.strings` with format arguments.
    public enum Text: Sendable, Hashable, ExpressibleByStringLiteral {
        /// Literal text.
        case text(String)
        /// A localization key (`loc-key`) and its arguments (`loc-args`), written nested under the text's own key.
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

    /// The keys ActivityKit documents for a Live Activity alert.
    package static let documentedKeys: Set<String> = ["title", "body", "sound"]

    /// The keys ActivityKit documents for localized text, nested under `title` or `body`.
    package static let documentedLocalizedKeys: Set<String> = ["loc-key", "loc-args"]
}

extension LiveActivityAlert {
    /// Writes the alert as the value of `aps.alert`.
    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        Self.write(self.title, key: "title", to: &writer)
        Self.write(self.body, key: "body", to: &writer)
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

    /// Writes `"key": "text"`, or `"key": {"loc-key": …, "loc-args": […]}` for localized text.
    private static func write(_ value: Text?, key: String, to writer: inout JSONWriter) {
        switch value {
        case .none:
            break
        case .text(let text):
            writer.key(key)
            writer.string(text)
        case .localized(let locKey, let arguments):
            writer.key(key)
            writer.beginObject()
            writer.key("loc-key")
            writer.string(locKey)
            if !arguments.isEmpty {
                writer.key("loc-args")
                writer.stringArray(arguments)
            }
            writer.endObject()
        }
    }

    /// Reads an `aps.alert` value in ActivityKit's shape; `nil` when it is not an object.
    init?(json: JSONValue) {
        guard let members = json.objectValue else { return nil }
        self.title = members["title"].flatMap(Self.text(json:))
        self.body = members["body"].flatMap(Self.text(json:))
        switch members["sound"] {
        case .string(let name):
            self.sound = .named(name)
        case .object(let sound):
            self.sound = .critical(name: sound["name"]?.stringValue ?? "default", volume: sound["volume"]?.doubleValue ?? 1)
        default:
            self.sound = nil
        }
    }

    /// Literal text, or `{"loc-key": …, "loc-args": […]}`.
    private static func text(json: JSONValue) -> Text? {
        if let text = json.stringValue { return .text(text) }
        guard let localized = json.objectValue, let key = localized["loc-key"]?.stringValue else { return nil }
        let arguments: [String]
        if case .array(let values) = localized["loc-args"] {
            arguments = values.compactMap(\.stringValue)
        } else {
            arguments = []
        }
        return .localized(key: key, arguments: arguments)
    }

    /// The first key of an `aps.alert` value that ActivityKit does not document for a Live Activity, as a path
    /// (`alert.title-loc-key`, `alert.title.title-loc-args`); `nil` when every key is documented. A device discards a
    /// Live Activity push whose alert has such a key, such as the flat localization keys of ordinary alerts.
    /// - Parameter json: The value of `aps.alert`.
    package static func undocumentedKey(in json: JSONValue) -> String? {
        guard let members = json.objectValue else { return "alert" }
        for key in members.keys.sorted() {
            guard Self.documentedKeys.contains(key) else { return "alert.\(key)" }
            guard key != "sound", let localized = members[key]?.objectValue else { continue }
            if let nested = localized.keys.sorted().first(where: { !Self.documentedLocalizedKeys.contains($0) }) {
                return "alert.\(key).\(nested)"
            }
        }
        return nil
    }
}

extension LiveActivityAlert {
    /// The alert as compact JSON, as `aps.alert` carries it: how the store keeps an alert to send again later.
    package var jsonText: String {
        var writer = JSONWriter()
        self.write(to: &writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// Reads an alert kept as ``jsonText``; `nil` when the text is not a JSON object.
    package init?(jsonText: String) {
        guard let json = try? JSONDecoder().decode(JSONValue.self, from: Data(jsonText.utf8)) else { return nil }
        self.init(json: json)
    }

    /// The same alert without its sound: what a renewal shows, lighting the screen without a sound.
    package var quiet: LiveActivityAlert {
        LiveActivityAlert(title: self.title, body: self.body)
    }
}
