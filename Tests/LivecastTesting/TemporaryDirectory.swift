import Foundation

/// A directory under the system's temporary directory, removed when the value is released.
public final class TemporaryDirectory: Sendable {
    /// The directory.
    public let url: URL

    public init() throws {
        self.url = FileManager.default.temporaryDirectory.appendingPathComponent("livecast-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: self.url, withIntermediateDirectories: true)
    }

    /// A path inside the directory.
    public func path(_ name: String) -> String {
        self.url.appendingPathComponent(name).path
    }

    deinit {
        try? FileManager.default.removeItem(at: self.url)
    }
}
