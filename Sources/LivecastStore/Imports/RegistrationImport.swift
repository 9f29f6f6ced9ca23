import PostgresNIO

/// How a bulk import of registrations runs, for push-to-start tokens and activities alike: the rows whose outcome is
/// plain (a new registration, a refresh, a rotation nothing else in the import touches) are written a chunk at a
/// time by a few set-based statements in one transaction each; every other row (one that is refused, that revives an
/// old token, or that shares its device, activity or token with another row) goes through the single registration,
/// one transaction each, in the rows' order. The plain rows touch nothing the others touch, so the result is the
/// same as registering every row in order, one by one.
///
/// A chunk finds its rows' database rows by probes: each key is looked up on its own through its unique index, and
/// the rows found are then locked in id order (`WHERE id = ANY(ARRAY(SELECT (SELECT id FROM … WHERE (key) = (r.key))
/// FROM unnest(…) AS r))`). Written as a join of the keys with the table, the lookup was often planned as a scan of
/// the whole table (the planner prices each probe as a read from disk), several times slower than the probes and
/// growing with the table (docs/PERFORMANCE.md).
package enum RegistrationImport {
    /// The most rows one transaction writes.
    package static let chunkSize = 5_000
    /// How many times a chunk is tried when a concurrent registration or import gets in its way (a unique key taken
    /// meanwhile, a deadlock) before its rows go one by one.
    private static let attempts = 3

    /// Runs an import of `count` rows.
    /// - Parameters:
    ///   - count: How many rows.
    ///   - isPlain: Whether a row may be written with others; it is, unless it shares something with another row.
    ///   - writePlain: Writes the rows it judges plain (given the database's rows, which it locks) in one
    ///     transaction, and returns what each did; the rows it leaves out go one by one.
    ///   - registerOne: The single registration of a row.
    static func run<Value: Sendable & Hashable>(
        count: Int,
        isPlain: (Int) -> Bool,
        writePlain: ([Int]) async throws -> [Int: Value],
        registerOne: (Int) async throws -> Value
    ) async throws -> [ImportOutcome<Value>] {
        var outcomes = [ImportOutcome<Value>?](repeating: nil, count: count)
        let plain = (0..<count).filter(isPlain)
        for start in stride(from: 0, to: plain.count, by: Self.chunkSize) {
            let chunk = Array(plain[start..<min(start + Self.chunkSize, plain.count)])
            for (index, value) in try await Self.writeChunk(chunk, writePlain) { outcomes[index] = .registered(value) }
        }
        for index in 0..<count where outcomes[index] == nil {
            do {
                outcomes[index] = .registered(try await registerOne(index))
            } catch let error as StoreError {
                outcomes[index] = .refused(error)
            }
        }
        return outcomes.map { $0! }
    }

    private static func writeChunk<Value>(_ chunk: [Int], _ writePlain: ([Int]) async throws -> [Int: Value]) async throws -> [Int: Value] {
        var attempt = 1
        while true {
            do {
                return try await writePlain(chunk)
            } catch  where Self.isRace(error) {
                guard attempt < Self.attempts else { return [:] }
                attempt += 1
            }
        }
    }

    /// Whether another transaction got in the way: SQLSTATE 23505 (a unique key taken meanwhile) or 40P01 (deadlock).
    private static func isRace(_ error: any Error) -> Bool {
        if let error = error as? PostgresTransactionError {
            return error.closureError.map(Self.isRace) ?? false
        }
        let sqlState = (error as? PSQLError)?.serverInfo?[.sqlState]
        return sqlState == "23505" || sqlState == "40P01"
    }
}
