/// A setting whose value is not allowed, or a required one that is missing: its key, the value it was given, and
/// what is allowed. The `livecast` commands add where the value came from (a flag, an environment variable, the
/// config file).
package struct InvalidSetting: Error, Sendable, Hashable, CustomStringConvertible {
    /// The setting's key, as in the config file (`rate-limit`).
    package var key: String
    /// The value given; `nil` when a required setting has none. Secrets are never kept here.
    package var value: String?
    /// What is allowed, as a phrase that follows the key: `must be a positive number`.
    package var allowed: String

    /// A setting `key` given `value`, where `allowed` says what would do.
    package init(key: String, value: String?, allowed: String) {
        self.key = key
        self.value = value
        self.allowed = allowed
    }

    package var description: String {
        "\(self.key) \(self.allowed)" + (self.value.map { " (given \($0))" } ?? "")
    }
}
