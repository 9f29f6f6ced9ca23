import ArgumentParser
import LivecastStore

/// `--master-key-file`: the base64 key that seals apps' signing keys in the database.
struct MasterKeyOption: ParsableArguments {
    @Option(help: "The file holding the base64 master key that seals apps' signing keys (default: $LIVECAST_MASTER_KEY_FILE).")
    var masterKeyFile: String?

    /// The master key, if one is given. - Throws: `ValidationError` when the file is unreadable or not a key.
    func masterKey(_ settings: Settings) throws -> MasterKey? {
        guard let path = settings.value(self.masterKeyFile, env: "LIVECAST_MASTER_KEY_FILE", key: "master-key-file") else { return nil }
        do {
            return try MasterKey(file: path)
        } catch {
            throw ValidationError("--master-key-file: \(error.message)")
        }
    }
}
