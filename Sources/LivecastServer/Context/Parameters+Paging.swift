import Hummingbird

extension Parameters {
    /// An integer query parameter within its range, if given.
    /// - Throws: ``APIError`` `422 invalid` naming the parameter.
    func integer(_ name: String, in range: ClosedRange<Int64>) throws -> Int64? {
        guard let text = self.get(name) else { return nil }
        guard let value = Int64(text), range.contains(value) else {
            throw APIError.invalid("\(name) must be an integer from \(range.lowerBound) to \(range.upperBound)", field: name)
        }
        return value
    }

    /// A list's `limit` query parameter: 1 to 1,000, 100 when absent.
    func pageLimit() throws -> Int {
        Int(try self.integer("limit", in: 1...1000) ?? 100)
    }
}

/// A page of a list as the API answers it: `{"<name>": [rows], "next": cursor}`, where `next` is the `after` (or
/// `before`) of the next page, absent on the last.
struct PageBody<Row: Encodable, Cursor: Encodable>: ResponseEncodable {
    /// The list's member name: `feeds`, `updates`, `deadLetters`.
    let name: String
    let rows: [Row]
    let next: Cursor?

    /// A page of rows read one past its `limit`: the first `limit` under the list's `name`, and the next page's
    /// cursor (the last shown row's) when there were more.
    init(_ name: String, _ rows: [Row], limit: Int, cursor: (Row) -> Cursor) {
        self.name = name
        self.rows = Array(rows.prefix(limit))
        self.next = rows.count > limit ? cursor(rows[limit - 1]) : nil
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: MemberName.self)
        try container.encode(self.rows, forKey: MemberName(self.name))
        try container.encodeIfPresent(self.next, forKey: MemberName("next"))
    }

    /// A member named at run time.
    private struct MemberName: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }

        init(_ name: String) { self.stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
