import Foundation

/// The file that keeps a client's ``PendingState`` across launches: `livecast-kit.json` in the directory the app
/// gives, written whole and atomically (a new file renamed over the old) after every change. Dates are kept as
/// Foundation writes them by default (seconds since 2001), which read back exactly.
struct PendingStore: Sendable {
    /// The file's name in the store directory.
    static let fileName = "livecast-kit.json"

    let fileURL: URL

    /// - Throws: When the directory cannot be created.
    init(directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.fileURL = directory.appendingPathComponent(Self.fileName)
    }

    /// The state kept by the last launch, or a new one with a new random device id when there is none or it cannot
    /// be read.
    /// - Parameter deviceID: The device id to use instead of the kept (or a new) one.
    func load(deviceID: String?) -> PendingState {
        let decoder = JSONDecoder()
        var state =
            (try? Data(contentsOf: self.fileURL)).flatMap { try? decoder.decode(PendingState.self, from: $0) }
            ?? PendingState(deviceID: UUID().uuidString.lowercased())
        if let deviceID, deviceID != state.deviceID {
            state = PendingState(deviceID: deviceID)
        }
        return state
    }

    /// Writes the state, atomically. - Throws: When the file cannot be written.
    func save(_ state: PendingState) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(state).write(to: self.fileURL, options: .atomic)
    }
}
