import Foundation

/// The file that keeps a client's ``PendingState`` across launches: `livecast-kit.json` in the directory the app
/// gives, written whole and atomically (a new file renamed over the old) after every change, and excluded from
/// iCloud and iTunes backups on Apple platforms (a backup restored to two phones must not give them one device id).
/// Dates are kept as Foundation writes them by default (seconds since 2001), which read back exactly.
struct PendingStore: Sendable {
    /// The file's name in the store directory.
    static let fileName = "livecast-kit.json"
    /// Where ``LivecastClient/discardUnreadableStore()`` moves a file it could not read, for a person to look at.
    static let unreadableFileName = "livecast-kit.unreadable.json"

    /// What the store directory held.
    enum Loaded {
        /// The kept state (or a new one for another configured device id, which replaces it).
        case kept(PendingState)
        /// No file: a new state with a new random device id (or the configured one).
        case new(PendingState)
        /// A file that cannot be read or decoded (the device is locked and the file protected, or it is damaged):
        /// left as it is.
        case unreadable(reason: String)
    }

    let fileURL: URL

    /// - Throws: When the directory cannot be created.
    init(directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.fileURL = directory.appendingPathComponent(Self.fileName)
        Self.excludeFromBackup(directory)
    }

    /// The state kept by the last launch, a new one when there is no file, or why the file cannot be used. The file
    /// is never replaced here.
    /// - Parameter deviceID: The device id to use instead of the kept (or a new) one.
    func load(deviceID: String?) -> Loaded {
        let data: Data
        do {
            data = try Data(contentsOf: self.fileURL)
        } catch {
            guard FileManager.default.fileExists(atPath: self.fileURL.path) else {
                return .new(PendingState(deviceID: deviceID ?? UUID().uuidString.lowercased()))
            }
            return .unreadable(reason: "\(self.fileURL.path) cannot be read: \(error.localizedDescription)")
        }
        let state: PendingState
        do {
            state = try JSONDecoder().decode(PendingState.self, from: data)
        } catch {
            return .unreadable(reason: "\(self.fileURL.path) cannot be decoded: \(error)")
        }
        if let deviceID, deviceID != state.deviceID { return .kept(PendingState(deviceID: deviceID)) }
        return .kept(state)
    }

    /// Writes the state, atomically, and excludes the new file from backups. - Throws: When it cannot be written.
    func save(_ state: PendingState) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(state).write(to: self.fileURL, options: .atomic)
        Self.excludeFromBackup(self.fileURL)
    }

    /// Moves an unreadable file aside (replacing an earlier one there), so a new state may be written.
    func moveAside() throws {
        let aside = self.fileURL.deletingLastPathComponent().appendingPathComponent(Self.unreadableFileName)
        try? FileManager.default.removeItem(at: aside)
        try FileManager.default.moveItem(at: self.fileURL, to: aside)
    }

    /// Marks a file or directory as not to be backed up (Apple platforms; elsewhere there is no such backup). An
    /// atomic write replaces the file, so this is done after every save, and on the directory as well.
    private static func excludeFromBackup(_ url: URL) {
        #if canImport(Darwin)
        var values = URLResourceValues()
        values.isExcludedFromBackup = true
        var url = url
        try? url.setResourceValues(values)
        #endif
    }
}
