import Synchronization

/// The settings a reading took and their effective values, defaults included, in the order they were read; secrets
/// as `<secret>`. `livecast serve --print-config` prints it. The readings of ``ConfigReader`` note into the ledger
/// of the task, if it has one (``SettingsLedger/current``).
package final class SettingsLedger: Sendable {
    /// A setting as read.
    package struct Entry: Sendable, Hashable {
        /// The setting's key (`rate-limit`).
        package var key: String
        /// Its effective value; `nil` when it has none (an optional setting left out).
        package var value: String?
        /// What the value means when it is not plain, such as how a database URL's TLS is verified.
        package var remark: String?
    }

    private let entries = Mutex<[Entry]>([])

    /// The ledger that the readings in this task note into.
    @TaskLocal package static var current: SettingsLedger?

    package init() {}

    /// Each setting read, once, in the order first read.
    package var settings: [Entry] {
        self.entries.withLock { $0 }
    }

    /// Notes `key`'s effective value.
    func note(_ key: String, _ value: String?) {
        self.entries.withLock { entries in
            guard !entries.contains(where: { $0.key == key }) else { return }
            entries.append(Entry(key: key, value: value))
        }
    }

    /// Notes what `key`'s value means (`--print-config` shows it beside the value), once the value is noted.
    package func remark(_ key: String, _ remark: String) {
        self.entries.withLock { entries in
            guard let index = entries.firstIndex(where: { $0.key == key }) else { return }
            entries[index].remark = remark
        }
    }
}
