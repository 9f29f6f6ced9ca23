import Logging
import PostgresNIO

/// The devices client keys registered, for the per-app ceiling on new ones an hour: a stranger with the published
/// key can make up device ids at will, and each new one would otherwise get the per-device allowances afresh. The
/// count is kept in PostgreSQL (`admit_client_device`, migration `0033`), so it holds across every instance.
package struct ClientDevices: DatabaseBacked {
    package let database: Database

    package init(database: Database) { self.database = database }

    /// Admits the device a client key's registration names: a device seen before at once, a new one while the app
    /// admitted fewer than `ceiling` new devices in the last hour.
    /// - Returns: `nil` when admitted, else how long until a new device may be admitted again.
    package func admit(appID: Int64, deviceID: String, ceiling: Int) async throws -> Duration? {
        let rows = try await self.client.guardedQuery(
            "SELECT admit_client_device(\(appID), \(deviceID), \(ceiling)::integer)",
            logger: self.logger
        )
        for try await wait in rows.decode(Double?.self) { return wait.map { .milliseconds(Int64(($0 * 1000).rounded(.up))) } }
        return nil
    }
}
