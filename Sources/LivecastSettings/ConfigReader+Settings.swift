package import Configuration
import LivecastCore

/// Typed readings of Livecast's settings. Every value is read as text and checked here, so a bad one is an
/// ``InvalidSetting`` that names the key and what is allowed, whichever source gave it (the `livecast` commands read
/// flags, environment variables and the config file into one `ConfigReader`). Each reading notes the effective
/// value in the task's ``SettingsLedger``.
extension ConfigReader {
    /// The text of `key`, else `fallback`; read as a secret (never logged nor printed) when `isSecret`.
    package func text(_ key: String, isSecret: Bool = false, default fallback: String? = nil) -> String? {
        let text = self.raw(key, isSecret: isSecret) ?? fallback
        SettingsLedger.current?.note(key, isSecret && text != nil ? "<secret>" : text)
        return text
    }

    /// A whole number, `minimum` or more; `fallback` when none is given.
    package func wholeNumber(_ key: String, atLeast minimum: Int, default fallback: Int) throws -> Int {
        let number = try self.number(key, atLeast: minimum) ?? fallback
        SettingsLedger.current?.note(key, "\(number)")
        return number
    }

    /// A positive, finite number; `fallback` when none is given.
    package func positiveNumber(_ key: String, default fallback: Double) throws -> Double {
        var number = fallback
        if let text = self.raw(key) {
            guard let given = Double(text), given > 0, given.isFinite else {
                throw InvalidSetting(key: key, value: text, allowed: "must be a positive number")
            }
            number = given
        }
        SettingsLedger.current?.note(key, "\(number)")
        return number
    }

    /// A time given in whole seconds, `minimum` or more; `fallback` when none is given.
    package func seconds(_ key: String, atLeast minimum: Int, default fallback: Duration) throws -> Duration {
        let time = try self.number(key, atLeast: minimum).map { Duration.seconds($0) } ?? fallback
        SettingsLedger.current?.note(key, "\(time.wholeSeconds)")
        return time
    }

    /// A time given in whole days, `minimum` or more; `fallback` when none is given.
    package func days(_ key: String, atLeast minimum: Int, default fallback: Duration) throws -> Duration {
        let time = try self.number(key, atLeast: minimum).map { Duration.days($0) } ?? fallback
        SettingsLedger.current?.note(key, "\(time.wholeSeconds / 86_400)")
        return time
    }

    /// A boolean: `true`/`false`, `yes`/`no`, `on`/`off` or `1`/`0`; `fallback` when none is given.
    package func boolean(_ key: String, default fallback: Bool) throws -> Bool {
        var value = fallback
        if let text = self.raw(key) {
            switch text.lowercased() {
            case "true", "yes", "on", "1": value = true
            case "false", "no", "off", "0": value = false
            default: throw InvalidSetting(key: key, value: text, allowed: "must be true or false")
            }
        }
        SettingsLedger.current?.note(key, "\(value)")
        return value
    }

    private func raw(_ key: String, isSecret: Bool = false) -> String? {
        self.string(forKey: ConfigKey([key]), isSecret: isSecret)
    }

    private func number(_ key: String, atLeast minimum: Int) throws -> Int? {
        guard let text = self.raw(key) else { return nil }
        guard let number = Int(text), number >= minimum else {
            throw InvalidSetting(key: key, value: text, allowed: "must be a whole number, \(minimum) or more")
        }
        return number
    }
}
