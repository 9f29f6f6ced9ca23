import PostgresNIO

/// Writes a batch of push-to-start registrations through `register_push_to_start_tokens` (migrations `0022`,
/// `0027`, `0033` and `0043`), column by column, and answers each registration's place (from 1) and outcome. Prepared once per
/// connection, so that a batch is bound and run without being parsed, planned and described again each time.
struct RegisterPushToStartTokensStatement: PostgresPreparedStatement {
    static let sql = """
        SELECT request, outcome FROM register_push_to_start_tokens(
            $1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bool[], $7::text[], $8::bool[], $9::bool[], $10::bool[], $11::int[])
        """

    /// The registration's place in the batch (from 1), and its outcome (``PushToStartTokens/Result``'s raw value, or
    /// `device_limit`).
    typealias Row = (Int, String)

    var columns = RegistrationColumns()

    /// The statement for `registrations`, in their order.
    init(_ registrations: [PushToStartTokens.Registration]) {
        for registration in registrations { self.columns.append(registration) }
    }

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 11)
        bindings.append(self.columns.appIDs)
        bindings.append(self.columns.deviceIDs)
        bindings.append(self.columns.attributesTypes)
        bindings.append(self.columns.tokens)
        bindings.append(self.columns.userIDs.values)
        bindings.append(self.columns.userIDs.isSet)
        bindings.append(self.columns.osVersions.values)
        bindings.append(self.columns.osVersions.isSet)
        bindings.append(self.columns.frequentUpdatesEnabled)
        bindings.append(self.columns.unproven)
        bindings.append(self.columns.caps)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}
