import ArgumentParser
import Foundation

/// Where a setting comes from, highest precedence first: its flag, its environment variable, then the config file
/// (`--config FILE`: a JSON object of strings, or `key = value` lines with `#` comments). Keys are the flags' names
/// without the dashes: `database-url`, `database-ca-file`, `listen`, `metrics-listen`, `trusted-proxies`,
/// `master-key-file`, `apns-push-url`, `apns-management-url`, `apns-ca-file`, `rate-limit`, `rate-burst`,
/// `failed-auth-rate`, `failed-auth-burst`, `max-clock-skew`, `http-idle-timeout`, `http-read-timeout`, `statement-timeout`, `database-wait-timeout`,
/// `dispatch-workers`, `retry-deadline`, `reap-interval`, `stale-grace`, `lifetime-margin`, `channel-retirement-delay`,
/// `token-expiry-days`, `start-registration-timeout`.
struct Settings {
    private let file: [String: String]
    private let environment: [String: String]

    /// Reads the config file, if one is given.
    /// - Throws: `ValidationError` when the file cannot be read or parsed.
    init(configFile path: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        self.environment = environment
        guard let path else {
            self.file = [:]
            return
        }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ValidationError("--config: cannot read \(path)")
        }
        self.file = try Self.parse(text, path: path)
    }

    /// A setting's value: the flag's, else the environment variable's, else the config file's.
    func value(_ flag: String?, env: String, key: String) -> String? {
        flag ?? self.environment[env] ?? self.file[key]
    }

    /// A whole-number setting, `minimum` or more; `fallback` when none is given.
    /// - Throws: `ValidationError` naming the flag when the value is not such a number.
    func integer(_ flag: Int?, env: String, key: String, minimum: Int, default fallback: Int) throws -> Int {
        guard let text = self.value(flag.map { String($0) }, env: env, key: key) else { return fallback }
        guard let number = Int(text), number >= minimum else { throw ValidationError("--\(key) must be a whole number, \(minimum) or more") }
        return number
    }

    /// A positive, finite number setting; `fallback` when none is given.
    /// - Throws: `ValidationError` naming the flag when the value is not such a number.
    func positiveNumber(_ flag: Double?, env: String, key: String, default fallback: Double) throws -> Double {
        guard let text = self.value(flag.map { String($0) }, env: env, key: key) else { return fallback }
        guard let number = Double(text), number > 0, number.isFinite else { throw ValidationError("--\(key) must be a positive number") }
        return number
    }

    private static func parse(_ text: String, path: String) throws -> [String: String] {
        if text.drop(while: \.isWhitespace).first == "{" {
            guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
                throw ValidationError("--config: \(path) is not a JSON object")
            }
            var values: [String: String] = [:]
            for (key, value) in object {
                switch value {
                case let string as String: values[key] = string
                case let number as NSNumber: values[key] = number.stringValue
                default: throw ValidationError("--config: \(key) in \(path) must be a string or a number")
                }
            }
            return values
        }
        var values: [String: String] = [:]
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let content = line.trimmingCharacters(in: .whitespaces)
            guard !content.isEmpty, !content.hasPrefix("#") else { continue }
            guard let equals = content.firstIndex(of: "=") else {
                throw ValidationError("--config: line \(number + 1) of \(path) is not key = value")
            }
            values[content[..<equals].trimmingCharacters(in: .whitespaces)] = content[content.index(after: equals)...].trimmingCharacters(
                in: .whitespaces
            )
        }
        return values
    }
}

/// `--config FILE`.
struct ConfigFileOption: ParsableArguments {
    @Option(help: "A config file: JSON or key = value lines (keys as the flags without dashes, e.g. database-url).")
    var config: String?

    func settings() throws -> Settings { try Settings(configFile: self.config) }
}
