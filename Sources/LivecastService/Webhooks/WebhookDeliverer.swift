package import Foundation
import LivecastCore
package import LivecastStore
package import Logging
import Metrics
import NIOPosix
package import PostgresNIO

/// One webhook deliverer: a pass claims one due endpoint with a batch of its pending deliveries, POSTs the batch
/// signed with the endpoint's secret(s), and records the outcome: delivered (the rows are deleted) or a failed
/// attempt (the endpoint backs off; rows older than ``Settings/giveUpAfter`` become failed).
///
/// An endpoint has one batch in flight, and batches go in id order, so each subject's events arrive in order; a
/// batch whose claim was taken over (this deliverer too slow, or dead) is sent again by the one that took it: at
/// least once, each event with its id for the receiver to drop duplicates.
///
/// A deliverer shared by several workers sends at most ``perApp`` batches of one app at once, so one app's endpoints
/// never hold more than that many of its workers; claims take turns between apps and endpoints
/// (``WebhookDeliveries/claim(limit:excludingApps:)``).
package struct WebhookDeliverer: Sendable {
    /// How a deliverer claims, sends and retries.
    package struct Settings: Sendable {
        /// The most events a request carries. Defaults to 100 (``WebhookDeliveries/maximumBatch``).
        package var batchSize: Int = WebhookDeliveries.maximumBatch
        /// How long a claim holds without a heartbeat; renewed every third of it while a request runs. Defaults
        /// to 30 seconds.
        package var lease: Duration = .seconds(30)
        /// A delivery's limit, from looking its host up to the end of its answer's body. Defaults to 10 seconds.
        package var timeout: Duration = .seconds(10)
        /// The backoff after failures. Defaults to 5 seconds doubling to 1 hour.
        package var backoff = WebhookBackoff()
        /// How old an event may be and still be tried again; older ones are given up (state `failed`) at their
        /// next failed attempt. Defaults to 24 hours.
        package var giveUpAfter: Duration = .seconds(86_400)
        /// Deliver to private, loopback and link-local addresses too. Defaults to `false`.
        package var allowPrivate = false

        package init() {}
    }

    /// The store's statements, under this deliverer's name.
    package let deliveries: WebhookDeliveries
    private let sender: WebhookSender
    private let masterKey: MasterKey?
    private let settings: Settings
    private let shares: AppShares
    private let logger: Logger

    /// The most batches of one app this deliverer sends at once.
    package var perApp: Int { self.shares.limit }

    /// - Parameters:
    ///   - masterKey: Opens the endpoints' secrets; without it every attempt fails (`secret_unavailable`).
    ///   - sender: The HTTP client; the caller shuts it down.
    ///   - claimer: The name this deliverer's claims carry. Defaults to a new one.
    ///   - perApp: The most batches of one app sent at once, by all the workers sharing this deliverer. Defaults to
    ///     no limit.
    package init(
        database: PostgresClient,
        masterKey: MasterKey?,
        sender: WebhookSender,
        settings: Settings = Settings(),
        claimer: UUID = UUID(),
        perApp: Int = .max,
        logger: Logger
    ) {
        self.deliveries = WebhookDeliveries(database: database, claimer: claimer, lease: settings.lease, logger: logger)
        self.sender = sender
        self.masterKey = masterKey
        self.settings = settings
        self.shares = AppShares(limit: perApp)
        self.logger = logger
    }

    /// Claims one due endpoint of an app with fewer than ``perApp`` batches under way here, and delivers a batch to it.
    /// - Returns: Whether an endpoint was due: `false` when there was nothing to do.
    @discardableResult
    package func deliverOnce() async throws -> Bool {
        let deliveries = self.deliveries
        let batchSize = self.settings.batchSize
        let claimed = try await self.shares.claim { full in
            try await deliveries.claim(limit: batchSize, excludingApps: full).map { (claimed: $0, app: $0.appID) }
        }
        guard let batch = claimed else { return false }
        defer { self.shares.leave(batch.appID) }
        var logger = self.logger
        logger[metadataKey: "webhook_endpoint"] = "\(batch.endpointID)"
        let outcome: WebhookSender.Outcome
        if batch.deliveries.isEmpty {
            outcome = .delivered(status: 0)  // delivered by another in the meantime: only the claim to release
        } else if let secrets = self.secrets(of: batch) {
            let body = batch.body
            let signature = WebhookSignature.header(body: body, timestamp: Int64(Date().timeIntervalSince1970), secrets: secrets)
            let headers = [
                ("Content-Type", "application/json"), ("User-Agent", "Livecast-Webhooks/1"),
                ("Livecast-Webhook-Id", batch.endpointID.uuidString.lowercased()), ("Livecast-Signature", signature),
            ]
            outcome = await self.withHeartbeat(batch.endpointID) {
                await self.sender.post(body, to: batch.url, headers: headers)
            }
        } else {
            outcome = .failed(reason: "secret_unavailable", retryAfter: nil)
        }
        switch outcome {
        case .delivered:
            if try await self.deliveries.acknowledge(batch) {
                WebhookMetrics.delivered(batch.deliveries.count)
            } else {
                logger.notice("a webhook batch was delivered after its claim was taken over; it will be sent again")
            }
        case .failed(let reason, let retryAfter):
            let delay = self.settings.backoff.delay(afterFailures: batch.consecutiveFailures + 1, retryAfter: retryAfter)
            let written = try await self.deliveries.fail(batch, reason: reason, retryIn: delay, giveUpAfter: self.settings.giveUpAfter)
            if let written {
                WebhookMetrics.failedAttempt(written.attempted - written.gaveUp, gaveUp: written.gaveUp)
                logger.info(
                    "webhook delivery failed; retrying later",
                    metadata: [
                        "reason": "\(reason)", "events": "\(batch.deliveries.count)", "retry_in_seconds": "\(delay.inSecondsRounded)",
                        "gave_up": "\(written.gaveUp)",
                    ]
                )
            } else {
                logger.notice("a failed webhook batch's claim was taken over; it will be sent again", metadata: ["reason": "\(reason)"])
            }
        }
        return true
    }

    /// The batch's secrets, current first, or `nil` (logged) when they cannot be opened.
    private func secrets(of batch: WebhookDeliveries.Batch) -> [WebhookSecret]? {
        guard let masterKey = self.masterKey else {
            self.logger.error("no master key to open a webhook endpoint's secret", metadata: ["webhook_endpoint": "\(batch.endpointID)"])
            return nil
        }
        do {
            var secrets = [try WebhookSecret.open(batch.sealedSecret, for: batch.endpointID, with: masterKey)]
            if let previous = batch.sealedPreviousSecret {
                secrets.append(try WebhookSecret.open(previous, for: batch.endpointID, with: masterKey))
            }
            return secrets
        } catch {
            self.logger.error(
                "could not open a webhook endpoint's secret (another master key?)",
                metadata: ["webhook_endpoint": "\(batch.endpointID)"]
            )
            return nil
        }
    }

    /// Runs `body` while a heartbeat renews the endpoint's claim every third of the lease.
    private func withHeartbeat<Result: Sendable>(_ endpointID: UUID, _ body: () async -> Result) async -> Result {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                while (try? await MultiThreadedEventLoopGroup.singleton.any().sleep(for: self.settings.lease / 3)) != nil {
                    do {
                        try await self.deliveries.renew(endpointID: endpointID)
                    } catch {
                        self.logger.warning("could not renew a webhook claim", metadata: ["error": "\(error)"])
                    }
                }
            }
            defer { group.cancelAll() }
            return await body()
        }
    }
}

extension Duration {
    fileprivate var inSecondsRounded: Double { (self.inSeconds * 1000).rounded() / 1000 }
}
