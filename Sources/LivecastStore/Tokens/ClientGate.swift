import Logging
import PostgresNIO

/// What every client key request passes, counted in PostgreSQL so that it holds across every instance
/// (`client_gate`, migration `0043`): a request from its device's bucket and from its address's, and, for a
/// registration, the device's admission. A stranger with the published key makes up device ids at will, each with
/// the per-device allowances afresh, so the app admits only so many new devices an hour, and one address only a
/// share of them; a device its backend vouched for (an identity assertion) is admitted apart from both.
///
/// One round trip per request, and it writes only an unlogged table but for a new device, so it commits without
/// waiting for a WAL flush (docs/PERFORMANCE.md).
package struct ClientGate: DatabaseBacked {
    /// A token bucket: `burst` requests at once, refilled at `ratePerSecond`.
    package struct Bucket: Sendable, Hashable {
        package var ratePerSecond: Double
        package var burst: Double

        package init(ratePerSecond: Double, burst: Double) {
            self.ratePerSecond = ratePerSecond
            self.burst = burst
        }
    }

    /// How a registration's device is admitted.
    package struct Admission: Sendable, Hashable {
        /// An identity assertion the app's backend signed came with it: neither ceiling holds it back.
        package var isVouched: Bool
        /// New devices the app admits an hour.
        package var ceiling: Int
        /// New devices one address brings an hour.
        package var addressShare: Int

        package init(isVouched: Bool, ceiling: Int, addressShare: Int) {
            self.isVouched = isVouched
            self.ceiling = ceiling
            self.addressShare = addressShare
        }
    }

    /// One request at the gate.
    package struct Request: Sendable, Hashable {
        package var appID: Int64
        package var deviceID: String
        /// The client's address as it is limited (an IPv4 address, an IPv6 /64); `nil` when unknown.
        package var address: String?
        package var perDevice: Bucket
        package var perAddress: Bucket
        /// For a registration: how its device is admitted.
        package var admission: Admission?

        package init(appID: Int64, deviceID: String, address: String?, perDevice: Bucket, perAddress: Bucket, admission: Admission? = nil) {
            self.appID = appID
            self.deviceID = deviceID
            self.address = address
            self.perDevice = perDevice
            self.perAddress = perAddress
            self.admission = admission
        }
    }

    /// Why the gate refused a request.
    package enum Refusal: String, Sendable, Hashable {
        /// The device is over its request rate.
        case deviceRate = "device_rate"
        /// The address is over its request rate.
        case addressRate = "address_rate"
        /// The app admitted its ceiling of new devices in the last hour.
        case appCeiling = "app_ceiling"
        /// The address brought its share of the app's new devices in the last hour.
        case addressShare = "address_share"
    }

    package let database: Database

    package init(database: Database) { self.database = database }

    /// Passes a request through the gate.
    /// - Returns: `nil` when it may go ahead, else why not and how long until it may come again.
    package func pass(_ request: Request) async throws -> (refusal: Refusal, retryAfter: Duration)? {
        for (refusal, wait) in try await self.client.guardedExecute(ClientGateStatement(request: request), logger: self.logger) {
            guard let refusal = refusal.flatMap(Refusal.init(rawValue:)), let wait else { return nil }
            return (refusal, .milliseconds(Int64((wait * 1000).rounded(.up))))
        }
        return nil
    }
}

/// `client_gate` (migration `0043`), prepared once per connection: every client key request runs it.
struct ClientGateStatement: PostgresPreparedStatement {
    static let sql = "SELECT refusal, retry_after FROM client_gate($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"

    /// Why it was refused and the seconds to wait, or two `NULL`s.
    typealias Row = (String?, Double?)

    var request: ClientGate.Request

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 11)
        bindings.append(self.request.appID)
        bindings.append(self.request.deviceID)
        bindings.append(self.request.address)
        bindings.append(self.request.perDevice.ratePerSecond)
        bindings.append(self.request.perDevice.burst)
        bindings.append(self.request.perAddress.ratePerSecond)
        bindings.append(self.request.perAddress.burst)
        bindings.append(self.request.admission != nil)
        bindings.append(self.request.admission?.isVouched ?? false)
        bindings.append(Int32(clamping: self.request.admission?.ceiling ?? 0))
        bindings.append(Int32(clamping: self.request.admission?.addressShare ?? 0))
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}
