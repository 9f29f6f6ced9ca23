/// The faults the emulator injects into APNs requests (device pushes, broadcasts and channel management) after
/// authentication. Set at start, and replaced while running through ``APNsEmulator/setFaults(_:)`` or
/// `PUT /emulator/faults`.
public struct FaultPlan: Sendable, Hashable, Codable {
    /// Answers given to the next requests, one each, in order, before ``failureShare`` applies.
    public var script: [FaultAnswer]
    /// The share of requests, from 0 to 1, answered with one of ``failureAnswers`` picked at random.
    public var failureShare: Double
    /// The answers ``failureShare`` picks from.
    public var failureAnswers: [FaultAnswer]
    /// Device tokens that answer `410 Unregistered`, with the `timestamp` (milliseconds since 1970) APNs reports.
    public var unregisteredTokens: [String: Int]

    /// Creates a plan.
    /// - Parameters:
    ///   - script: Answers for the next requests, in order. Defaults to none.
    ///   - failureShare: The share of requests that fail at random. Defaults to 0.
    ///   - failureAnswers: What a random failure answers. Defaults to 429, 500 and 503.
    ///   - unregisteredTokens: Tokens answering 410, with their timestamps. Defaults to none.
    public init(
        script: [FaultAnswer] = [],
        failureShare: Double = 0,
        failureAnswers: [FaultAnswer] = FaultPlan.defaultFailureAnswers,
        unregisteredTokens: [String: Int] = [:]
    ) {
        self.script = script
        self.failureShare = failureShare
        self.failureAnswers = failureAnswers
        self.unregisteredTokens = unregisteredTokens
    }

    /// 429 `TooManyRequests`, 500 `InternalServerError` and 503 `ServiceUnavailable`.
    public static let defaultFailureAnswers: [FaultAnswer] = [
        .status(429, reason: "TooManyRequests"),
        .status(500, reason: "InternalServerError"),
        .status(503, reason: "ServiceUnavailable"),
    ]

    /// Takes the fault for the next request, if any: the script first, then the random share.
    mutating func nextFault() -> FaultAnswer? {
        if !self.script.isEmpty {
            return self.script.removeFirst()
        }
        guard self.failureShare > 0, !self.failureAnswers.isEmpty, Double.random(in: 0..<1) < self.failureShare else {
            return nil
        }
        return self.failureAnswers.randomElement()
    }

    /// Checks the plan's values. - Returns: what is wrong, or `nil`.
    var problem: String? {
        guard (0...1).contains(self.failureShare) else { return "failureShare must be between 0 and 1" }
        return nil
    }
}

extension FaultPlan {
    private enum CodingKeys: String, CodingKey {
        case script, failureShare, failureAnswers, unregisteredTokens
    }

    /// Decodes a plan; absent keys take their defaults.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            script: try container.decodeIfPresent([FaultAnswer].self, forKey: .script) ?? [],
            failureShare: try container.decodeIfPresent(Double.self, forKey: .failureShare) ?? 0,
            failureAnswers: try container.decodeIfPresent([FaultAnswer].self, forKey: .failureAnswers)
                ?? FaultPlan.defaultFailureAnswers,
            unregisteredTokens: try container.decodeIfPresent([String: Int].self, forKey: .unregisteredTokens) ?? [:]
        )
    }
}
