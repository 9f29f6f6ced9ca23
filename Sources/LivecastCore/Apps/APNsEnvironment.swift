/// An app's APNs environment: `sandbox` for development builds, `production` for TestFlight and the App Store.
/// Each has its own hosts, tokens and channels; a token of one is refused by the other.
public enum APNsEnvironment: String, Sendable, CaseIterable {
    case sandbox
    case production
}
