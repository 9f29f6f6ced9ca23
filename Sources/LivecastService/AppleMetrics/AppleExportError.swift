/// Why an export from Apple failed, in words an operator can act on; recorded on the export and shown in the app's
/// record. Never carries the token.
struct AppleExportError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
