import Foundation

/// Files the tests share, found from this source file's location.
package enum Fixtures {
    /// The repository's root directory.
    package static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // LivecastTesting
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()

    /// `Tests/Fixtures/make-jwt.sh`: the openssl provider-token recipe.
    package static var makeJWTScript: String {
        repositoryRoot.appendingPathComponent("Tests/Fixtures/make-jwt.sh").path
    }

    /// The directory holding the built products (`livecast`) next to the running test bundle.
    package static var productsDirectory: URL {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = testBinary.deletingLastPathComponent()
        while directory.path != "/", !FileManager.default.fileExists(atPath: directory.appendingPathComponent("livecast").path) {
            directory.deleteLastPathComponent()
        }
        return directory
    }
}
