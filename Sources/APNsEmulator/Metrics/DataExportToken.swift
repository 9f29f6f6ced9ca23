/// A CloudKit data-export token the emulator accepts in `X-Apple-CloudKit-Management-Token`: like Apple's, it is
/// restricted to one team and one app.
public struct DataExportToken: Sendable, Hashable {
    /// The token's text.
    public var token: String
    /// The Apple Developer team it belongs to.
    public var teamID: String
    /// The bundle id of the app whose figures it may export.
    public var bundleID: String

    /// - Parameters:
    ///   - token: The token's text.
    ///   - teamID: The team it belongs to.
    ///   - bundleID: The app whose figures it may export.
    public init(token: String, teamID: String, bundleID: String) {
        self.token = token
        self.teamID = teamID
        self.bundleID = bundleID
    }
}

/// What goes wrong with the data exports requested from now on, to test a client's handling of Apple's bad days.
public enum DataExportFault: String, Sendable, Hashable, Codable {
    /// Nothing: requests are processed and succeed.
    case none
    /// The status URL answers `FAILED`.
    case failed
    /// The status URL answers `EXPIRED`.
    case expired
    /// The CSV carries a column Apple's documentation does not name.
    case unknownColumn
}
