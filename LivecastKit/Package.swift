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
        // The client (`LivecastClient`) and the ActivityKit adapter (`Livecast.observe`, where ActivityKit exists).
        .target(name: "LivecastKit", swiftSettings: swiftSettings),
        .testTarget(name: "LivecastKitTests", dependencies: ["LivecastKit"], swiftSettings: swiftSettings),
    ],
    swiftLanguageModes: [.v6]
)
