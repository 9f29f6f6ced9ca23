/// Apple's figures beside Livecast's own, day by day (`GET /v1/apps/{bundleId}/delivery-report`): per channel,
/// Apple's published, delivered and subscriptions next to the broadcasts Livecast sent and APNs accepted; per push
/// type, Apple's delivered, stored and discarded next to the device pushes APNs accepted from Livecast. A day is
/// flagged where they diverge by more than the threshold (a share of the larger figure; `0` flags any difference).
///
/// Apple rounds its device-push figures and withholds a small channel's (`-1`, shown as too few subscribers, never
/// compared); a day Apple's export does not cover yet has no Apple figures and is not flagged.
package struct DeliveryReport: Sendable, Encodable {
    /// The first and last day, `yyyy-MM-dd`, UTC.
    package var from: String
    package var to: String
    package var threshold: Double
    /// Days with any figure, oldest first.
    package var days: [Day]
    /// How the app's exports from Apple went: their last days and errors.
    package var appleExports: [AppleMetricsExports.State]

    package struct Day: Sendable, Encodable {
        package var day: String
        /// Whether a channel or a push type of the day is flagged.
        package var flagged: Bool
        package var channels: [ChannelDay]
        package var pushTypes: [PushTypeDay]
        /// Apple's figures for all the app's channels together, when exported.
        package var allChannels: AppleBroadcast?
    }

    /// A channel's day.
    package struct ChannelDay: Sendable, Encodable {
        package var channelId: String
        /// Apple's figures; absent where Apple's export does not cover the day yet.
        package var apple: AppleBroadcast?
        /// Livecast's broadcasts; absent for a day before Livecast's records of the app begin (pruned before they
        /// were kept, or sent before Livecast).
        package var livecast: LivecastBroadcasts?
        package var flagged: Bool
        /// Why it is flagged.
        package var reasons: [String]
    }

    /// Apple's broadcast figures of a day; withheld ones (`-1`) are left out and said to be too few subscribers.
    package struct AppleBroadcast: Sendable, Encodable {
        package var published: Int64?
        package var delivered: Int64?
        package var subscriptions: Int64?
        package var uniqueSubscribers: Int64?
        /// Apple reported `-1`: the channel had too few subscribers for Apple to show its figures.
        package var tooFewSubscribers: Bool?

        init(_ day: AppleBroadcastDay) {
            if day.isWithheld {
                self.tooFewSubscribers = true
            } else {
                self.published = day.published
                self.delivered = day.delivered
                self.subscriptions = day.subscriptions
            }
            self.uniqueSubscribers = day.uniqueSubscribers.flatMap { $0 < 0 ? nil : $0 }
        }
    }

    /// Livecast's broadcasts to a channel on a day.
    package struct LivecastBroadcasts: Sendable, Encodable {
        /// Broadcasts sent (each attempt).
        package var sent: Int64
        /// Those APNs accepted.
        package var accepted: Int64

        package init(sent: Int64, accepted: Int64) {
            self.sent = sent
            self.accepted = accepted
        }
    }

    /// A push type's day.
    package struct PushTypeDay: Sendable, Encodable {
        package var pushType: String
        /// Apple's counts by status (`delivered`, `stored`, `discarded`, …); absent where the export does not cover
        /// the day yet.
        package var apple: [String: Int64]?
        /// Device pushes APNs accepted from Livecast; absent for a day before Livecast's records of the app begin.
        package var livecast: LivecastPushes?
        package var flagged: Bool
        package var reasons: [String]
    }

    /// Livecast's device pushes of a day.
    package struct LivecastPushes: Sendable, Encodable {
        package var accepted: Int64
    }

    /// What the report is assembled from.
    package struct Sources: Sendable {
        package var appleBroadcasts: [String: [AppleBroadcastDay]] = [:]
        package var appleDeliveries: [AppleDeliveryDay] = []
        /// Livecast's broadcasts by channel and day.
        package var broadcasts: [String: [String: LivecastBroadcasts]] = [:]
        /// Livecast's accepted device pushes by push type and day.
        package var pushes: [String: [String: Int64]] = [:]
        package var exports: [AppleMetricsExports.State] = []
        /// The first day of Livecast's records of the app (kept or live); its figures before it are unknown, not zero.
        package var livecastSince: String?

        package init() {}
    }

    /// Whether two figures diverge: by more than `threshold` of the larger.
    static func diverges(_ first: Int64, _ second: Int64, threshold: Double) -> Bool {
        Double(abs(first - second)) > threshold * Double(max(first, second))
    }

    /// The report over `from` through `to` from its sources.
    package static func assemble(from: String, to: String, threshold: Double, _ sources: Sources) -> DeliveryReport {
        func covered(_ dataset: AppleDataset, _ channelID: String?, _ day: String) -> Bool {
            sources.exports.contains { $0.dataset == dataset && $0.channelId == channelID && ($0.fetchedThrough ?? "") >= day }
        }
        var dayNames = Set<String>()
        for days in sources.appleBroadcasts.values { dayNames.formUnion(days.map(\.day)) }
        dayNames.formUnion(sources.appleDeliveries.map(\.day))
        for days in sources.broadcasts.values { dayNames.formUnion(days.keys) }
        for days in sources.pushes.values { dayNames.formUnion(days.keys) }
        let channelIDs = Set(sources.appleBroadcasts.keys.filter { !$0.isEmpty }).union(sources.broadcasts.keys).sorted()
        let pushTypes = Set(sources.appleDeliveries.map(\.pushType)).union(sources.pushes.keys).sorted()
        var days: [Day] = []
        for name in dayNames.filter({ $0 >= from && $0 <= to }).sorted() {
            let livecastKnown = sources.livecastSince.map { name >= $0 } ?? false
            var channels: [ChannelDay] = []
            for channelID in channelIDs {
                let livecast = sources.broadcasts[channelID]?[name] ?? LivecastBroadcasts(sent: 0, accepted: 0)
                var apple = sources.appleBroadcasts[channelID]?.first { $0.day == name }
                if apple == nil, covered(.channelMetrics, channelID, name) {
                    apple = AppleBroadcastDay(day: name, published: 0, delivered: 0, subscriptions: 0)
                }
                guard apple != nil || livecast.sent > 0 else { continue }
                let reasons = livecastKnown ? apple.map { Self.reasons(apple: $0, livecast: livecast, threshold: threshold) } ?? [] : []
                channels.append(
                    ChannelDay(
                        channelId: channelID,
                        apple: apple.map(AppleBroadcast.init),
                        livecast: livecastKnown ? livecast : nil,
                        flagged: !reasons.isEmpty,
                        reasons: reasons
                    )
                )
            }
            var pushTypeDays: [PushTypeDay] = []
            for pushType in pushTypes {
                let accepted = sources.pushes[pushType]?[name] ?? 0
                let rows = sources.appleDeliveries.filter { $0.day == name && $0.pushType == pushType }
                var apple: [String: Int64]?
                if !rows.isEmpty || covered(.deliveryMetrics, nil, name) {
                    apple = Dictionary(rows.map { ($0.status, $0.count) }, uniquingKeysWith: +)
                }
                guard apple?.isEmpty == false || accepted > 0 else { continue }
                var reasons: [String] = []
                if let apple, livecastKnown {
                    let delivered = apple["delivered", default: 0]
                    if Self.diverges(delivered, accepted, threshold: threshold) {
                        let discarded = apple["discarded", default: 0]
                        reasons.append("Apple delivered \(delivered) of the \(accepted) pushes APNs accepted (\(discarded) discarded)")
                    }
                }
                pushTypeDays.append(
                    PushTypeDay(
                        pushType: pushType,
                        apple: apple,
                        livecast: livecastKnown ? LivecastPushes(accepted: accepted) : nil,
                        flagged: !reasons.isEmpty,
                        reasons: reasons
                    )
                )
            }
            let allChannels = sources.appleBroadcasts[""]?.first { $0.day == name }.map(AppleBroadcast.init)
            guard !channels.isEmpty || !pushTypeDays.isEmpty || allChannels != nil else { continue }
            days.append(
                Day(
                    day: name,
                    flagged: channels.contains(where: \.flagged) || pushTypeDays.contains(where: \.flagged),
                    channels: channels,
                    pushTypes: pushTypeDays,
                    allChannels: allChannels
                )
            )
        }
        return DeliveryReport(from: from, to: to, threshold: threshold, days: days, appleExports: sources.exports)
    }

    /// Why a channel's day is flagged: Apple published other than APNs accepted, or delivered fewer than each
    /// broadcast to each subscriber. Withheld figures are never compared.
    static func reasons(apple: AppleBroadcastDay, livecast: LivecastBroadcasts, threshold: Double) -> [String] {
        guard !apple.isWithheld else { return [] }
        var reasons: [String] = []
        if Self.diverges(apple.published, livecast.accepted, threshold: threshold) {
            reasons.append("Apple published \(apple.published) broadcasts; APNs accepted \(livecast.accepted) from Livecast")
        }
        let expected = apple.published * apple.subscriptions
        if apple.delivered < expected, Self.diverges(apple.delivered, expected, threshold: threshold) {
            reasons.append(
                "Apple delivered \(apple.delivered) of up to \(expected) (\(apple.published) broadcasts × \(apple.subscriptions) subscriptions)"
            )
        }
        return reasons
    }
}
