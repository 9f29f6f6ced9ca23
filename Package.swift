// swift-tools-version:6.2
import PackageDescription

/// CI (where `CI` is set, as `.ci/run` runs) builds our own targets with every warning an error, so none creeps back in;
/// a local build only warns. Dependencies are not ours: SwiftPM keeps their warnings quiet.
let warningSettings: [SwiftSetting] = Context.environment["CI"] == nil ? [] : [.treatAllWarnings(as: .error)]
let swiftSettings: [SwiftSetting] =
    [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
    ] + warningSettings
/// The library targets' settings: an import is internal unless it says otherwise (`public import` where a module's
/// types appear in the public API, `package import` where in the package's), so nothing leaks by accident.
let librarySettings = swiftSettings + [.enableUpcomingFeature("InternalImportsByDefault")]

let package = Package(
    name: "livecast",
    platforms: [.macOS(.v15), .iOS(.v17)],
    products: [
        .executable(name: "livecast", targets: ["livecast"]),
        .library(name: "LivecastCore", targets: ["LivecastCore"]),
        .library(name: "APNsEmulator", targets: ["APNsEmulator"]),
        .library(name: "APNs", targets: ["APNs"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "5.0.1"),
        .package(url: "https://github.com/swiftlang/swift-subprocess.git", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.5.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        // The app side (LivecastKit/): a package of its own, with no dependency, that the demo reports through.
        .package(path: "LivecastKit"),
    ],
    targets: [
        // Domain values: Live Activity payloads and their validation. No I/O.
        .target(name: "LivecastCore", swiftSettings: librarySettings),
        // Livecast's settings read through swift-configuration: typed readings, their errors and the ledger of what
        // was used. Apart from LivecastCore, so that the products do not compile swift-configuration.
        .target(
            name: "LivecastSettings",
            dependencies: ["LivecastCore", .product(name: "Configuration", package: "swift-configuration")],
            swiftSettings: librarySettings
        ),
        // The APNs emulator: TLS + HTTP/2 (libnghttp2) push, broadcast and channel management, with a simulated device fleet.
        .target(
            name: "APNsEmulator",
            dependencies: [
                "CNGHTTP2",
                "LivecastCore",
                "NGHTTP2Bridge",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: librarySettings
        ),
        // libnghttp2, the C HTTP/2 engine that the APNs transport and the emulator frame with (Debian: libnghttp2-dev).
        .systemLibrary(name: "CNGHTTP2", pkgConfig: "libnghttp2", providers: [.apt(["libnghttp2-dev"])]),
        // nghttp2's C callbacks, handed on to the Swift session of the APNs transport or of the emulator.
        .target(name: "NGHTTP2Bridge", dependencies: ["CNGHTTP2"], swiftSettings: librarySettings),
        // The APNs client: provider tokens, the HTTP/2 transport, device pushes, broadcasts, channel management.
        .target(
            name: "APNs",
            dependencies: [
                "CNGHTTP2",
                "LivecastCore",
                "NGHTTP2Bridge",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: librarySettings
        ),
        // PostgreSQL only: the migration runner (reads sql/), apps, keys, tokens, activities, feeds, channels, the outbox.
        .target(
            name: "LivecastStore",
            dependencies: [
                "LivecastSettings",
                .product(name: "Configuration", package: "swift-configuration"),
                "LivecastCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: librarySettings
        ),
        // Workflows that need both APNs and the database: the channel registry and reconciler, the dispatchers that
        // send the outbox, the reaper, and the apps' APNs clients.
        .target(
            name: "LivecastService",
            dependencies: [
                "LivecastSettings",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Configuration", package: "swift-configuration"),
                "APNs",
                "LivecastCore",
                "LivecastStore",
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: librarySettings
        ),
        // A throwaway PostgreSQL (a cluster in a temporary directory, on a free loopback port) for the demo, the tests
        // and the fan-out benchmark; programs are started with swift-subprocess.
        .target(
            name: "LocalPostgres",
            dependencies: [
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: librarySettings
        ),
        // The HTTP API (routes, API-key auth, rate limits, errors, health and metrics, the OpenAPI document), the
        // operator console (server-rendered pages over the API) and the composition root that builds the whole service.
        .target(
            name: "LivecastServer",
            dependencies: [
                "LivecastSettings",
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOFoundationEssentialsCompat", package: "swift-nio"),
                .product(name: "Configuration", package: "swift-configuration"),
                "LivecastCore",
                "LivecastService",
                "LivecastStore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Resources/openapi.yaml")],
            swiftSettings: librarySettings
        ),
        // The command-line tool.
        .executableTarget(
            name: "livecast",
            dependencies: [
                "LivecastSettings",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Configuration", package: "swift-configuration"),
                "APNs",
                "APNsEmulator",
                "LivecastCore",
                .product(name: "LivecastKit", package: "LivecastKit"),
                "LivecastServer",
                "LivecastService",
                "LivecastStore",
                "LocalPostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // Helpers shared by the test targets: external processes (curl, openssl, nghttp), emulator fixtures.
        .target(
            name: "LivecastTesting",
            dependencies: [
                "APNs", "APNsEmulator", "LivecastCore", "LivecastStore", "LocalPostgres",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            path: "Tests/LivecastTesting",
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "LivecastCoreTests", dependencies: ["LivecastCore"], swiftSettings: swiftSettings),
        .testTarget(
            name: "LivecastKitIntegrationTests",
            dependencies: [
                "APNs", "APNsEmulator", "LivecastServer", "LivecastService", "LivecastStore", "LivecastTesting",
                .product(name: "LivecastKit", package: "LivecastKit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LocalPostgresTests",
            dependencies: [
                "LocalPostgres",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Subprocess", package: "swift-subprocess"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "APNsEmulatorTests",
            dependencies: ["APNsEmulator", "LivecastCore", "LivecastTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "APNsTests",
            dependencies: [
                "APNs", "APNsEmulator", "LivecastCore", "LivecastTesting", "LocalPostgres",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LivecastStoreTests",
            dependencies: [
                "LivecastCore", "LivecastStore", "LivecastTesting",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LivecastServiceTests",
            dependencies: [
                "APNs", "APNsEmulator", "LivecastCore", "LivecastService", "LivecastStore", "LivecastTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LivecastServerTests",
            dependencies: [
                "APNs", "APNsEmulator", "LivecastCore", "LivecastServer", "LivecastService", "LivecastStore", "LivecastTesting", "LocalPostgres",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LivecastCLITests",
            dependencies: [
                "APNsEmulator", "livecast", "LivecastCore", "LivecastServer", "LivecastService", "LivecastSettings", "LivecastStore",
                "LivecastTesting",
                "LocalPostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)

// The benchmarks are in the build graph only when scripts/bench.sh asks for them (LIVECAST_BENCHMARKS=1), so the
// tests' builds never compile them nor HdrHistogram (the pattern of Hummingbird's ENABLE_HB_BENCHMARKS).
if Context.environment["LIVECAST_BENCHMARKS"] != nil {
    package.dependencies.append(.package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"))
    package.targets += [
        // The APNs client benchmark that scripts/bench.sh runs beside h2load.
        .executableTarget(
            name: "livecast-client-benchmark",
            dependencies: [
                "LivecastCore",
                .product(name: "NIOCore", package: "swift-nio"),
                "APNs",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Benchmarks/ClientBenchmark",
            swiftSettings: swiftSettings
        ),
        // The fan-out benchmark that scripts/bench.sh runs beside h2load: one feed update to stored followers.
        .executableTarget(
            name: "livecast-fanout-benchmark",
            dependencies: [
                "APNs",
                "LivecastCore",
                "LivecastService",
                "LivecastStore",
                "LocalPostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Benchmarks/FanOutBenchmark",
            swiftSettings: swiftSettings
        ),
        // The HTTP API benchmark that scripts/bench.sh --api runs beside pgbench: registrations, update latency
        // (open loop) and the highest update rate, broadcasts and a fan-out timed to the wire (the emulator runs in
        // the benchmark's process), imports.
        .executableTarget(
            name: "livecast-api-benchmark",
            dependencies: [
                .product(name: "Subprocess", package: "swift-subprocess"),
                "APNsEmulator",
                "LivecastCore",
                "LocalPostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Benchmarks/APIBenchmark",
            swiftSettings: swiftSettings
        ),
    ]
}
