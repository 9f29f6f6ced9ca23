/// An app's APNs environment: `sandbox` for development builds, `production` for TestFlight and the App Store.
/// Each has its own hosts, tokens and channels; a token of one is refused by the other.
///
/// An open set of values, not an enum, as APNSwift's `APNSEnvironment`: an environment Apple adds later becomes a
/// new static member without breaking code that switches over the ones it knows. Coded as its name.
public struct APNsEnvironment: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    /// Its name: `sandbox` or `production`.
    public let rawValue: String

    private init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    /// An environment from its name. - Returns: `nil` for a name that is not one of APNs' environments.
    public init?(rawValue: String) {
        switch rawValue {
        case Self.sandbox.rawValue: self = .sandbox
        case Self.production.rawValue: self = .production
        default: return nil
        }
    }

    /// Development builds of the app.
    public static let sandbox = Self("sandbox")
    /// TestFlight and App Store builds.
    public static let production = Self("production")

    /// The environments APNs has now.
    public static let known: [Self] = [.sandbox, .production]

    /// Its name.
    public var description: String { self.rawValue }
}
