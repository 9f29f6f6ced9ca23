import ArgumentParser
import LivecastStore

/// `--master-key-file`: the base64 key that seals apps' signing keys in the database.
struct MasterKeyOption: ParsableArguments {
    @Option(help: "The file holding the base64 master key that seals apps' signing keys (default: $LIVECAST_MASTER_KEY_FILE).")
    var masterKeyFile: String?

    /// The master key, if one is given (`MasterKey(reader:)`). - Throws: `ValidationError` when the file is
    /// unreadable or not a key.
    func masterKey(_ settings: LivecastConfig) throws -> MasterKey? {
        try settings.read(flags: self.flags) { try MasterKey(reader: $0) }
    }

    /// This flag, by setting key.
    var flags: [String: String?] { ["master-key-file": self.masterKeyFile] }
}
