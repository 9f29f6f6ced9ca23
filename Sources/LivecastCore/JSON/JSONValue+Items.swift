extension JSONValue? {
    /// The elements when this is an array, else none: `response.json["deliveries"].items`.
    package var items: [JSONValue] {
        guard case .array(let items)? = self else { return [] }
        return items
    }
}
