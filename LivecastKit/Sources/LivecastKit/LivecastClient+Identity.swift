extension LivecastClient {
    /// The user the device's registrations are bound to, and the app's closure that proves it.
    struct Identity {
        let userID: String
        let assertion: @Sendable () async throws -> String
    }

    /// Why no assertion could be had.
    struct AssertionFailure: Error {
        let message: String
    }

    /// Binds the device's registrations to a user of the app: every push-to-start token and activity is registered
    /// again with `userId` (now, and with every later registration), so the app's backend can start and address
    /// Live Activities by user.
    ///
    /// Livecast takes a `userId` from a client key only with a `userAssertion`: a JWT (ES256) that the app's backend
    /// signs with an identity key registered in Livecast, with `sub` the user id, `aud` the app's bundle id, `exp`
    /// at most 24 hours ahead, and optionally `iat` and `deviceId` (``deviceID``). `assertion` fetches one from that
    /// backend; it is called when each registration is sent (never stored). When Livecast refuses the assertion
    /// (`403 invalid_user_assertion`), it is called once more; refused again, or when it throws, the registration
    /// is sent without the user, so the token is not lost, and ``LivecastEvent/Kind/identityBindingFailed`` says so.
    ///
    /// The binding lasts for this client's life: call it at every launch once the user is known.
    public func identify(userID: String, assertion: @escaping @Sendable () async throws -> String) {
        self.identity = Identity(userID: userID, assertion: assertion)
        self.rebindLiveRegistrations()
    }

    /// Unbinds the device's registrations from the user (at sign-out): each is registered again without `userId`.
    public func forgetUser() {
        self.identity = nil
        self.rebindLiveRegistrations()
    }

    /// Registers every live push-to-start token and activity again, with the current user (or none).
    private func rebindLiveRegistrations() {
        for content in self.state.liveRegistrations {
            self.enqueue(content.withUser(self.identity?.userID))
        }
    }

    /// A fresh assertion for `userID`, from the app's closure.
    func assertion(for userID: String) async -> Result<String, AssertionFailure> {
        guard let identity = self.identity, identity.userID == userID else {
            return .failure(
                AssertionFailure(message: "no assertion for user \(userID): identify(userID:assertion:) was not called for it in this launch")
            )
        }
        do {
            return .success(try await identity.assertion())
        } catch {
            return .failure(AssertionFailure(message: "the assertion closure threw: \(error)"))
        }
    }
}
