import Hummingbird

extension LivecastAPI {
    /// An integer query parameter within its range, if given.
    /// - Throws: ``APIError`` `422 invalid` naming the parameter.
    static func integer(_ parameters: Parameters, _ name: String, in range: ClosedRange<Int64>) throws -> Int64? {
        guard let text = parameters.get(name) else { return nil }
        guard let value = Int64(text), range.contains(value) else {
            throw APIError.invalid("\(name) must be an integer from \(range.lowerBound) to \(range.upperBound)", field: name)
        }
        return value
    }

    /// A list's `limit` query parameter: 1 to 1,000, 100 when absent.
    static func pageLimit(_ parameters: Parameters) throws -> Int {
        Int(try Self.integer(parameters, "limit", in: 1...1000) ?? 100)
    }

    /// A page of rows read one past its `limit`: the first `limit`, and the next page's cursor (the last shown
    /// row's) when there were more.
    static func paged<Row, Cursor>(_ rows: [Row], limit: Int, cursor: (Row) -> Cursor) -> (rows: ArraySlice<Row>, next: Cursor?) {
        (rows.prefix(limit), rows.count > limit ? cursor(rows[limit - 1]) : nil)
    }
}
