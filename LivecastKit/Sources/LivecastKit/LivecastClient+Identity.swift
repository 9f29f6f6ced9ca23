extension LivecastClient {
    /// The user the device's registrations are bound to, and the app's closure that proves it.
    struct Identity {
        let userID: String
        let assertion: @Sendable () async throws -> String
    }

    /// What the app said in this launch about the device's user.
    enum IdentityState {
        /// Nothing yet: registrations carry the user the store remembers (``PendingState/rememberedUser``), so that
        /// one made early in a launch does not unbind it in Livecast.
        case unknown
        /// ``LivecastClient/identify(userID:assertion:)``.
        case identified(Identity)
        /// ``LivecastClient/forgetUser()``.
        case forgotten
    }

    /// How a registration bound to a user goes now.
    enum UserBinding: Equatable {
        /// With the user and a fresh assertion from the app's closure.
        case proven
        /// Not yet: the app has not said who the user is in this launch, and a push-to-start registration without
        /// its user would unbind the user in Livecast. It waits until the app says, or until `until`.
        case waiting(until: ContinuousClock.Instant)
        /// Without the user; `failure` says why when the app should know (then ``LivecastEvent/Kind/identityBindingFailed``).
        case withoutUser(failure: String?)
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
    /// The user id (never the assertion) is kept in the store file: at the next launch, registrations made before
    /// this is called again carry it, so an unchanged token is not sent again without it, and a new push-to-start
    /// token waits for this call (at most ``Configuration/identifyGracePeriod``) rather than unbind the user in
    /// Livecast. Call it at every launch once the user is known.
    public func identify(userID: String, assertion: @escaping @Sendable () async throws -> String) {
        self.identity = .identified(Identity(userID: userID, assertion: assertion))
        self.state.boundUser = .user(userID)
        self.persist()
        for content in self.state.liveRegistrations {
            self.enqueue(content.withUser(userID))
        }
        self.wakeHeld()
    }

    /// Unbinds the device's push-to-start tokens from the user (at sign-out): each is registered again without
    /// `userId`, which replaces the binding in Livecast, and later registrations carry no user.
    ///
    /// An activity already running keeps its user in Livecast until it ends: Livecast keeps an activity's user when
    /// a registration names none, and a client key cannot clear it. Activities started later are registered without
    /// a user.
    public func forgetUser() {
        self.identity = .forgotten
        self.state.boundUser = .nobody
        self.persist()
        for content in self.state.liveRegistrations {
            guard case .pushToStartToken = content else { continue }
            self.enqueue(content.withUser(nil))
        }
        self.wakeHeld()
    }

    /// The user a registration made now is bound to: the one the app named in this launch, else (before it said
    /// anything) the one the store remembers.
    var currentUserID: String? {
        switch self.identity {
        case .identified(let identity): identity.userID
        case .forgotten: nil
        case .unknown: self.state.rememberedUser
        }
    }

    /// How a registration bound to `userID` goes now.
    ///
    /// Before the app says anything in this launch, an activity registration goes without the user (Livecast keeps an
    /// activity's user when a registration names none), and a push-to-start registration waits: Livecast replaces a
    /// push-to-start token's user with the registration's, none included. After ``Configuration/identifyGracePeriod``
    /// it goes without the user too, rather than leave Livecast a stale token. A registration made for another user
    /// than the app's current one goes without: the registration the change queued after it binds the current one.
    func binding(of userID: String, for report: LivecastReport) -> UserBinding {
        switch self.identity {
        case .identified(let identity) where identity.userID == userID:
            return .proven
        case .unknown:
            guard case .pushToStartToken = report.content else { return .withoutUser(failure: nil) }
            if ContinuousClock.now < self.identityDeadline { return .waiting(until: self.identityDeadline) }
            return .withoutUser(
                failure:
                    "identify(userID:assertion:) or forgetUser() was not called within \(self.configuration.identifyGracePeriod) of launch; sent without the user, which unbinds the push-to-start token from \(userID) in Livecast"
            )
        case .identified, .forgotten:
            return .withoutUser(failure: nil)
        }
    }

    /// A fresh assertion for `userID`, from the app's closure.
    func assertion(for userID: String) async -> Result<String, AssertionFailure> {
        guard case .identified(let identity) = self.identity, identity.userID == userID else {
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
