import Foundation

/// The demo's running commentary on stdout: one line per step, `✓` when it went as planned and `✗` when it did not.
/// Quiet, it prints only failures and what must be seen (the final table, `--keep`'s examples).
struct DemoProgress: Sendable {
    /// Whether only failures and essential output are printed.
    let quiet: Bool

    /// A step that went as planned: `✓ step → outcome`.
    func done(_ step: String, _ outcome: String) {
        guard !self.quiet else { return }
        Self.write("✓ \(step) → \(outcome)")
    }

    /// A step that went wrong: `✗ step → outcome`, printed even when quiet.
    func failed(_ step: String, _ outcome: String) {
        Self.write("✗ \(step) → \(outcome)")
    }

    /// Text printed even when quiet.
    func show(_ text: String) {
        Self.write(text)
    }

    /// Written straight to the file descriptor, so a reader sees each line as it happens whatever the buffering.
    private static func write(_ line: String) {
        FileHandle.standardOutput.write(Data("\(line)\n".utf8))
    }
}
