import ArgumentParser

/// What every mode needs to start its stack. `livecast serve` inherits this process's environment, so
/// `DATABASE_URL` (a migrated database holding the app) and `LIVECAST_MASTER_KEY_FILE` (the key that sealed the
/// app's signing key) come from there.
struct StackOptions: ParsableArguments {
    @Option(help: "The livecast executable; its `serve` is started for the run.")
    var livecast: String

    @Option(help: "The app's signing key, TEAMID:KEYID:PATH of its .p8 file, which the in-process APNs emulator trusts.")
    var signingKey: String

    @Option(help: "The app's bundle id.")
    var bundleId = "com.example.bench"

    @Option(help: "An API key of the app, of the operator role or above (the feed modes create feeds).")
    var apiKey: String

    @Option(help: "A directory for the server's output (serve.out, serve.err), its process id (serve.pid) and the emulator's certificate.")
    var work: String
}
