import ArgumentParser
import LivecastCore
import LivecastStore

/// `--bundle-id B [--environment sandbox|production]`: the app a command works on.
struct AppSelection: ParsableArguments {
    @Option(help: "The app's bundle id.")
    var bundleId: String

    @Option(help: "sandbox or production; needed only when the bundle id is registered in both.")
    var environment: String?

    /// The app. - Throws: `ValidationError` when there is none, or the bundle id is in both environments.
    func app(in apps: Apps) async throws -> Apps.App {
        let matching = try await apps.apps(bundleID: self.bundleId).filter { self.environment == nil || $0.environment.rawValue == self.environment }
        switch matching.count {
        case 0: throw ValidationError("no app \(self.bundleId)\(self.environment.map { " in \($0)" } ?? "")")
        case 1: return matching[0]
        default: throw ValidationError("\(self.bundleId) is registered in sandbox and production: give --environment")
        }
    }
}
