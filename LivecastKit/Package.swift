// swift-tools-version:6.0
import PackageDescription

/// The app side of Livecast: an iOS app reports its Live Activity tokens and activities straight to Livecast with a
/// publishable client key. Foundation only (FoundationNetworking on Linux), no dependencies, so an app adds it
/// without pulling in the server's packages. Tools 6.0, so Xcode 16 opens it.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "LivecastKit",
    // iOS is what it is for; macOS only so that the core builds and its tests run on a Mac.
    platforms: [.iOS("16.1"), .macOS(.v13)],
    products: [
        .library(name: "LivecastKit", targets: ["LivecastKit"])
    ],
    targets: [
        // The client (`LivecastClient`) and the ActivityKit adapter (`Livecast.observe`), which is compiled against
        // ActivityKit on iOS and against the stand-in on Linux, and left out elsewhere (Mac Catalyst included).
        .target(
            name: "LivecastKit",
            dependencies: [.target(name: "ActivityKitStandIn", condition: .when(platforms: [.linux]))],
            resources: [.copy("PrivacyInfo.xcprivacy")],
            swiftSettings: swiftSettings
        ),
        // ActivityKit's public API as Apple documents it, on Linux only, with controls for the tests
        // (`ActivityKitControl`), so that the adapter is compiled and tested under strict concurrency there.
        .target(name: "ActivityKitStandIn", swiftSettings: swiftSettings),
        .testTarget(
            name: "LivecastKitTests",
            dependencies: [
                "LivecastKit",
                .target(name: "ActivityKitStandIn", condition: .when(platforms: [.linux])),
            ],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
