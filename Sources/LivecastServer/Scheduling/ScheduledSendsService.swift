import Foundation
import HTTPTypes
import LivecastStore
import Logging
import ServiceLifecycle

/// Sends scheduled starts, updates and ends when their `sendAt` comes: each goes through the checks and into the
/// outbox as if it had been posted then (ordering, coalescing, the clock skew as of then), or is refused with the
/// error it would have got, kept on it. Looks once a second; many instances share the work (each request is
/// locked while it is sent).
struct ScheduledSendsService: Service {
    /// Checks and stores the requests as the routes do.
    let intake: UpdateIntake
    let logger: Logger
    /// How often it looks for due requests. Defaults to a second.
    var interval: Duration = .seconds(1)

    func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            do {
                try await self.sendDue()
            } catch {
                self.logger.warning("could not send scheduled updates; trying again", metadata: APIErrorMiddleware.metadata(error))
            }
            let interval = self.interval
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }

    /// Sends every request whose `sendAt` has come (into the outbox, or refused).
    /// - Returns: How many there were.
    @discardableResult
    func sendDue() async throws -> Int {
        let scheduled = self.intake.scheduled
        var sent = 0
        while !Task.isShuttingDownGracefully, try await scheduled.takeNextDue({ try await self.send($0) }) {
            sent += 1
        }
        return sent
    }

    /// Checks and stores one due request; a refusal (what the API would have answered) is returned, other errors
    /// (the database's) are thrown, so it stays scheduled.
    private func send(_ entry: ScheduledUpdates.Entry) async throws -> Result<Int64, ScheduledUpdates.Refusal> {
        guard let route = UpdateRoute(rawValue: entry.route) else { return .failure(.init("unknown route \(entry.route)")) }
        do {
            let prepared = try self.intake.prepare(
                route,
                target: entry.target,
                body: try UpdateRequestBody(route, body: entry.body),
                appID: entry.appID,
                idempotencyKey: nil,
                now: Int(Date().timeIntervalSince1970)
            )
            return .success(try await self.intake.store(prepared, logger: self.logger).updateID)
        } catch let error as APIError {
            return .failure(.init("\(error.status.code) \(error.code): \(error.message)"))
        } catch let error as StoreError {
            let refusal = APIError(error)
            return .failure(.init("\(refusal.status.code) \(refusal.code): \(refusal.message)"))
        }
    }
}
