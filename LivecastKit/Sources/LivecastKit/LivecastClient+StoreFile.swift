extension LivecastClient {
    /// Tries the store file again while it could not be read; once it can, adopts it.
    func reopenStoreIfUnreadable() {
        guard self.unreadableStore != nil else { return }
        switch self.store.load(deviceID: self.configuration.deviceID) {
        case .kept(let state), .new(let state): self.adopt(state)
        case .unreadable(let reason): self.unreadableStore = reason
        }
    }

    /// Takes a state read from (or made for) the store file, with the reports made in memory meanwhile after its own.
    /// Those were made before the file told whom the device's registrations are bound to: unless the app said it in
    /// this launch, they are bound to the file's remembered user, so that they do not unbind it in Livecast.
    func adopt(_ loaded: PendingState) {
        var state = loaded
        switch self.identity {
        case .identified(let identity): state.boundUser = .user(identity.userID)
        case .forgotten: state.boundUser = .nobody
        case .unknown: break
        }
        for item in self.state.pending {
            var report = item.report
            if case .unknown = self.identity, report.content.isRegistration {
                report = LivecastReport(report.content.withUser(state.rememberedUser))
            }
            _ = state.enqueue(report, now: item.madeAt)
        }
        self.state = state
        self.unreadableStore = nil
        self.currentDeviceID.value = state.deviceID
        self.persist()
    }

    /// Writes the state; when the file cannot be written, reports still go out, but do not outlive the app. Nothing
    /// is written while the file cannot be read: it is never replaced behind the app's back.
    func persist() {
        guard self.unreadableStore == nil else { return }
        try? self.store.save(self.state)
    }
}
