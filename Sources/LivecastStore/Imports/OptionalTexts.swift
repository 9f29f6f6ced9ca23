/// A column of optional text for `unnest(…)`, bound as two arrays: the values (empty where there is none) and
/// whether each is set, since PostgresNIO binds no `NULL` inside an array. SQL reads it back as
/// `CASE WHEN is_set THEN value END`.
struct OptionalTexts {
    private(set) var values: [String] = []
    private(set) var isSet: [Bool] = []

    mutating func append(_ value: String?) {
        self.values.append(value ?? "")
        self.isSet.append(value != nil)
    }
}
