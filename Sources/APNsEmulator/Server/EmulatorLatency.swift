import Foundation

/// How long the emulator waits before each answer, as APNs' answers take tens of milliseconds: a base time and a
/// jitter, each request's delay drawn uniformly from base ± jitter. Per request, not per connection, so the streams
/// of one connection overlap as they do at Apple. The request is processed (a device applies it, the wire records
/// it) when it arrives; only its answer waits.
public struct EmulatorLatency: Sendable, Hashable, CustomStringConvertible {
    /// No wait: every answer at once.
    public static let none = EmulatorLatency(base: .zero, jitter: .zero)

    /// The middle of the delays.
    public var base: Duration
    /// How far a delay may be from ``base``, either way (never below zero).
    public var jitter: Duration

    /// - Parameters:
    ///   - base: The middle of the delays.
    ///   - jitter: How far one may be from it. Defaults to none.
    public init(base: Duration, jitter: Duration = .zero) {
        self.base = base
        self.jitter = jitter
    }

    /// Reads `40ms`, `40ms±10ms` (or `40ms+-10ms`), with units `ms` or `s`; `nil` for anything else.
    public init?(text: String) {
        let parts = text.replacingOccurrences(of: "+-", with: "±").split(separator: "±", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let base = Self.duration(parts[0]) else { return nil }
        let jitter = parts.count == 2 ? Self.duration(parts[1]) : .zero
        guard let jitter else { return nil }
        self.init(base: base, jitter: jitter)
    }

    /// A delay for one answer.
    func draw() -> Duration {
        guard self.jitter > .zero else { return self.base }
        let spread = Double(self.jitter.components.seconds) + Double(self.jitter.components.attoseconds) / 1e18
        let offset = Duration.seconds(Double.random(in: -spread...spread))
        return max(.zero, self.base + offset)
    }

    public var description: String {
        self.jitter > .zero ? "\(Self.milliseconds(self.base))±\(Self.milliseconds(self.jitter))" : Self.milliseconds(self.base)
    }

    private static func duration(_ text: Substring) -> Duration? {
        let text = text.trimmingCharacters(in: .whitespaces)
        if text.hasSuffix("ms"), let value = Double(text.dropLast(2)), value >= 0, value <= 60_000 {
            return .milliseconds(value)
        }
        if text.hasSuffix("s"), let value = Double(text.dropLast()), value >= 0, value <= 60 {
            return .seconds(value)
        }
        return nil
    }

    private static func milliseconds(_ duration: Duration) -> String {
        let milliseconds = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        return milliseconds == milliseconds.rounded() ? "\(Int(milliseconds))ms" : "\(milliseconds)ms"
    }
}
