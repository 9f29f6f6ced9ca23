/// A request on the wire that broke one of ``WireJudge``'s rules.
public struct WireViolation: Sendable, Hashable, CustomStringConvertible {
    /// The request.
    public var record: WireRecord
    /// The rule it broke, with the figures: `timestamp 1700000003 not newer than accepted 1700000005 (#4)`.
    public var rule: String

    /// Creates a violation.
    /// - Parameters:
    ///   - record: The request.
    ///   - rule: The rule it broke, with the figures.
    public init(record: WireRecord, rule: String) {
        self.record = record
        self.rule = rule
    }

    /// `#7 device:ab12…: timestamp … not newer than …`.
    public var description: String {
        "#\(self.record.sequence) \(self.record.target): \(self.rule)"
    }
}
