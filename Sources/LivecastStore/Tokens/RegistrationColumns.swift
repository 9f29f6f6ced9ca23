/// Push-to-start registrations column by column, as `unnest(…)` and `register_push_to_start_tokens` take them; the
/// optional fields as values and whether each is set (``OptionalTexts``).
struct RegistrationColumns {
    private(set) var appIDs: [Int64] = []
    private(set) var deviceIDs: [String] = []
    private(set) var attributesTypes: [String] = []
    private(set) var tokens: [String] = []
    private(set) var userIDs = OptionalTexts()
    private(set) var osVersions = OptionalTexts()
    private(set) var frequentUpdatesEnabled: [Bool] = []
    /// Whether each registration leaves its token unproven (a client key's).
    private(set) var unproven: [Bool] = []
    /// Each registration's cap of live tokens on its device (a client key's), 0 for none.
    private(set) var caps: [Int32] = []

    /// Adds `registration`'s columns, with `token` for its token (the registration's own by default).
    mutating func append(_ registration: PushToStartTokens.Registration, token: String? = nil) {
        self.appIDs.append(registration.appID)
        self.deviceIDs.append(registration.deviceID)
        self.attributesTypes.append(registration.attributesType)
        self.tokens.append(token ?? registration.token)
        self.userIDs.append(registration.userID)
        self.osVersions.append(registration.osVersion)
        self.frequentUpdatesEnabled.append(registration.frequentUpdatesEnabled)
        self.unproven.append(registration.isByClientKey)
        self.caps.append(Int32(clamping: registration.deviceTokenCap ?? 0))
    }
}
