import ArgumentParser
import Configuration
import Foundation
import LivecastCore
import LivecastSettings

/// The settings of a `livecast` command: its flags, else `LIVECAST_*` environment variables (`DATABASE_URL` for the
/// database, `LIVECAST_MIGRATIONS_DIR` for the migrations), else the `--config` file (a JSON object of strings and
/// numbers, or `key = value` lines with `#` comments), else each setting's default. One swift-configuration
/// `ConfigReader` reads them in that order; keys are the flags' names without the dashes (`rate-limit`), and the
/// types that take settings list theirs (`init(reader:)`). The database URL and the master key file are read as
/// secrets.
struct LivecastConfig: Sendable {
    /// The settings read as secrets: never printed.
    static let secretKeys: Set<String> = ["database-url", "master-key-file", "master-key"]

    private let environment: InMemoryProvider
    private let environmentNames: [String: String]
    private let file: (path: String, provider: InMemoryProvider)?

    /// Reads the environment and the config file, if one is given.
    /// - Throws: `ValidationError` when the file cannot be read or parsed.
    init(configFile path: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        var names: [String: String] = [:]
        for name in environment.keys { if let key = Self.key(ofEnvironmentVariable: name) { names[key] = name } }
        self.environmentNames = names
        self.environment = Self.provider("environment", names.mapValues { environment[$0] ?? "" })
        guard let path else {
            self.file = nil
            return
        }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ValidationError("--config: cannot read \(path)")
        }
        self.file = (path, Self.provider("config file \(path)", try ConfigFileText.parse(text, path: path)))
    }

    /// The environment variable of a setting: `LIVECAST_RATE_LIMIT` for `rate-limit`.
    static func environmentVariable(of key: String) -> String {
        switch key {
        case "database-url": "DATABASE_URL"
        case "migrations": "LIVECAST_MIGRATIONS_DIR"
        default: "LIVECAST_" + key.uppercased().replacingOccurrences(of: "-", with: "_")
        }
    }

    /// Runs `body` with a reader of these settings behind `flags` (each flag's key and the value given, if any),
    /// noting what it reads in `ledger`.
    /// - Throws: A `ValidationError` for a setting `body` refused (``InvalidSetting``): its flag, what is allowed,
    ///   and the value and source that gave it.
    func read<Result>(flags: [String: String?], ledger: SettingsLedger? = nil, _ body: (ConfigReader) throws -> Result) throws -> Result {
        let given = flags.compactMapValues { $0 }
        var providers: [any ConfigProvider] = [Self.provider("flags", given), self.environment]
        if let file { providers.append(file.provider) }
        let reader = ConfigReader(providers: providers)
        do {
            return try SettingsLedger.$current.withValue(ledger) { try body(reader) }
        } catch let invalid as InvalidSetting {
            throw ValidationError(self.message(invalid, flags: given))
        }
    }

    /// Where `key`'s value comes from: its flag, its environment variable, the config file, or its default.
    func source(of key: String, flags: [String: String?]) -> String {
        if flags[key] ?? nil != nil { return "--\(key)" }
        if let name = self.environmentNames[key] { return name }
        if let file, Self.value(of: key, in: file.provider) != nil { return "\(key) in \(file.path)" }
        return "default"
    }

    private func message(_ invalid: InvalidSetting, flags: [String: String]) -> String {
        let flag = "--\(invalid.key)"
        let source = self.source(of: invalid.key, flags: flags)
        guard invalid.value != nil || source != "default" else {
            return "\(flag) \(invalid.allowed): give \(flag) or set \(Self.environmentVariable(of: invalid.key)) "
                + "(or \(invalid.key) in the --config file)"
        }
        let value = invalid.value.map { Self.secretKeys.contains(invalid.key) ? "" : "\($0) " } ?? ""
        return "\(flag) \(invalid.allowed) (\(value)from \(source))"
    }

    private static func provider(_ name: String, _ values: [String: String]) -> InMemoryProvider {
        var configValues: [AbsoluteConfigKey: ConfigValue] = [:]
        for (key, text) in values {
            configValues[AbsoluteConfigKey([key])] = ConfigValue(.string(text), isSecret: Self.secretKeys.contains(key))
        }
        return InMemoryProvider(name: name, values: configValues)
    }

    private static func value(of key: String, in provider: InMemoryProvider) -> ConfigValue? {
        (try? provider.value(forKey: AbsoluteConfigKey([key]), type: .string))?.value
    }

    private static func key(ofEnvironmentVariable name: String) -> String? {
        switch name {
        case "DATABASE_URL": return "database-url"
        case "LIVECAST_MIGRATIONS_DIR": return "migrations"
        case _ where name.hasPrefix("LIVECAST_"): return name.dropFirst("LIVECAST_".count).lowercased().replacingOccurrences(of: "_", with: "-")
        default: return nil
        }
    }
}

/// `--config FILE`.
struct ConfigFileOption: ParsableArguments {
    @Option(help: "A config file: JSON or key = value lines (keys as the flags without dashes, e.g. database-url).")
    var config: String?

    func settings() throws -> LivecastConfig { try LivecastConfig(configFile: self.config) }
}
