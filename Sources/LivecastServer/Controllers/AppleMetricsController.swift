import Foundation
import Hummingbird
import LivecastStore
import Logging

/// Apple's numbers beside Livecast's: `PUT`/`DELETE /v1/apps/{bundleId}/apple-metrics/credentials` (admin) store or
/// remove the app's data-export credentials (the token sealed under the master key, shown never again;
/// `409 master_key_required` without one), `GET …/apple-metrics` (admin) shows them and how each export last went,
/// and `GET …/delivery-report?from=&to=&threshold=` (backend) puts Apple's daily figures beside Livecast's own.
struct AppleMetricsController: APIController {
    let credentials: AppleMetricsCredentials
    let exports: AppleMetricsExports
    let reports: DeliveryReports
    /// Seals the tokens; `nil` when the server has none.
    let masterKey: MasterKey?
    /// Days flagged in the report by default: the job's threshold.
    let threshold: Double

    func addRoutes(to routes: RouteRegistrar) {
        routes.app(.put, "/v1/apps/{bundleId}/apple-metrics/credentials", role: .admin) { request, context, scope in
            let body = try await request.decodeJSON(as: CredentialsBody.self, context: context)
            guard let masterKey = self.masterKey else {
                throw APIError(
                    .conflict,
                    code: "master_key_required",
                    "the data-export token is sealed with the master key, and this server has none: start it with --master-key-file (LIVECAST_MASTER_KEY_FILE)"
                )
            }
            _ = try await self.credentials.logging(to: context.logger).set(
                appID: scope.appID,
                teamID: body.teamId,
                appleAppID: body.appId ?? scope.bundleID,
                token: body.token,
                masterKey: masterKey
            )
            context.logger.notice("Apple data-export credentials set", metadata: ["app": "\(scope.bundleID)"])
            return try await self.status(scope.appID, context: context)
        }
        routes.app(.delete, "/v1/apps/{bundleId}/apple-metrics/credentials", role: .admin) { _, context, scope in
            guard try await self.credentials.logging(to: context.logger).remove(appID: scope.appID) else {
                throw APIError.notFound("the app has no Apple data-export credentials")
            }
            context.logger.notice("Apple data-export credentials removed", metadata: ["app": "\(scope.bundleID)"])
            return Response(status: .noContent)
        }
        routes.app(.get, "/v1/apps/{bundleId}/apple-metrics", role: .admin) { _, context, scope in
            try await self.status(scope.appID, context: context)
        }
        routes.app(.get, "/v1/apps/{bundleId}/delivery-report", role: .backend) { request, context, scope in
            let parameters = request.uri.queryParameters
            let to = try Self.day(parameters.get("to"), field: "to") ?? Self.day(Date())
            let from = try Self.day(parameters.get("from"), field: "from") ?? to - 29
            guard from <= to else { throw APIError.invalid("from must not be after to", field: "from") }
            guard to - from < 366 else { throw APIError.invalid("a report covers at most 366 days", field: "from") }
            var threshold = self.threshold
            if let text = parameters.get("threshold") {
                guard let value = Double(text), value >= 0, value <= 1 else {
                    throw APIError.invalid("threshold must be a number from 0 to 1", field: "threshold")
                }
                threshold = value
            }
            let report = try await self.reports.logging(to: context.logger).report(
                appID: scope.appID,
                from: Self.text(from),
                to: Self.text(to),
                threshold: threshold
            )
            return report
        }
    }

    /// The app's credentials (never the token) and its exports.
    func status(_ appID: Int64, context: APIRequestContext) async throws -> AppleMetricsStatus {
        try await AppleMetricsStatus.read(appID: appID, credentials: self.credentials, exports: self.exports, logger: context.logger)
    }

    /// The UTC day of a time, in days since 1970.
    static func day(_ date: Date) -> Int {
        Int(floor(date.timeIntervalSince1970 / 86400))
    }

    /// A `yyyy-MM-dd` query parameter as days since 1970, if given. - Throws: ``APIError`` `422 invalid`.
    static func day(_ text: String?, field: String) throws -> Int? {
        guard let text else { return nil }
        guard text.wholeMatch(of: /\d{4}-\d{2}-\d{2}/) != nil, let date = try? Date(text + "T00:00:00Z", strategy: .iso8601),
            Self.text(Self.day(date)) == text
        else {
            throw APIError.invalid("\(field) must be a date, yyyy-MM-dd (UTC)", field: field)
        }
        return Self.day(date)
    }

    /// `yyyy-MM-dd` of a day since 1970.
    static func text(_ day: Int) -> String {
        let components = Calendar(identifier: .gregorian).dateComponents(
            in: TimeZone(identifier: "UTC")!,
            from: Date(timeIntervalSince1970: TimeInterval(day) * 86400)
        )
        return String(format: "%04d-%02d-%02d", components.year ?? 1970, components.month ?? 1, components.day ?? 1)
    }
}

/// `PUT …/apple-metrics/credentials`.
private struct CredentialsBody: Decodable {
    /// The Apple Developer team id.
    let teamId: String
    /// The bundle id Apple's export knows the app by; the app's own when absent.
    let appId: String?
    /// The CloudKit data-export token.
    let token: String
}

/// `GET …/apple-metrics`, and the app record's `appleMetrics`: the credentials without the token, and each export's
/// last day and error.
struct AppleMetricsStatus: ResponseEncodable {
    let credentials: AppleMetricsCredentials.Shown?
    let exports: [AppleMetricsExports.State]

    private enum CodingKeys: String, CodingKey {
        case configured, credentials, exports, failing
    }

    /// An app's, read with its request's logger.
    static func read(
        appID: Int64,
        credentials: AppleMetricsCredentials,
        exports: AppleMetricsExports,
        logger: Logger
    ) async throws -> AppleMetricsStatus {
        AppleMetricsStatus(
            credentials: try await credentials.logging(to: logger).shown(appID: appID),
            exports: try await exports.logging(to: logger).states(appID: appID)
        )
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.credentials != nil, forKey: .configured)
        try container.encodeIfPresent(self.credentials, forKey: .credentials)
        try container.encode(self.exports, forKey: .exports)
        try container.encode(self.exports.filter { $0.lastError != nil }.count, forKey: .failing)
    }
}

/// `GET /v1/apps/{bundleId}`: the app, and beside it `appleMetrics`, so a failing export shows in the app's record.
struct AppRecordBody: ResponseEncodable {
    let app: Apps.App
    let appleMetrics: AppleMetricsStatus

    private enum CodingKeys: String, CodingKey {
        case appleMetrics
    }

    func encode(to encoder: any Encoder) throws {
        try self.app.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.appleMetrics, forKey: .appleMetrics)
    }
}
