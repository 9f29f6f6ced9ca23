extension APNsEmulator {
    /// Accepts a data-export token from now on (`/v1/dataExports`, see the emulator's routes).
    public func addDataExportToken(_ token: DataExportToken) {
        self.state.withLock { $0.dataExports.tokens[token.token] = token }
    }

    /// Stops accepting a data-export token, as when it expires: requests with it answer `401`.
    public func expireDataExportToken(_ token: String) {
        self.state.withLock { _ = $0.dataExports.tokens.removeValue(forKey: token) }
    }

    /// What goes wrong with the data exports requested from now on.
    public var dataExportFault: DataExportFault {
        get { self.state.withLock { $0.dataExports.fault } }
        set { self.state.withLock { $0.dataExports.fault = newValue } }
    }
}
