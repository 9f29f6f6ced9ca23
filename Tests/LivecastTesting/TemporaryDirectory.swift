import Foundation

/// A directory under the system's temporary directory, removed when the value is released.
package final class TemporaryDirectory: Sendable {
    /// The directory.
    package let url: URL

    package init() throws {
        self.url = FileManager.default.temporaryDirectory.appendingPathComponent("livecast-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: self.url, withIntermediateDirectories: true)
    }

    /// A path inside the directory.
    package func path(_ name: String) -> String {
        self.url.appendingPathComponent(name).path
    }

    deinit {
        try? FileManager.default.removeItem(at: self.url)
    }
}
