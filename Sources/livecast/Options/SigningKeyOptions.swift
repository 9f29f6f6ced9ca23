import ArgumentParser

/// `--team-id T --key-id K`: whose APNs signing key (`.p8`) signs the provider tokens. The key file itself is a
/// command's own option (`apps add --key-file`, `send --key`), as each command does something else with it.
struct SigningKeyOptions: ParsableArguments {
    @Option(help: "The team id of the signing key (10 characters).")
    var teamId: String

    @Option(help: "The key id of the signing key (10 characters).")
    var keyId: String
}
