import Foundation
import NIOCore

extension EmulatorResponder {
    /// Apple's data export (iCloud web services), in the shape of PushKit's "Exporting delivery metrics logs" and
    /// "Exporting broadcast push notification metrics", on the push port under `/v1/dataExports`:
    ///
    /// | Method and path | Answer |
    /// | --- | --- |
    /// | `POST /v1/dataExports/apns/teams/{teamId}/appId/{appId}/datasetName/{dataset}/request` | `{"statusUrl", "requestedAt"}` |
    /// | `GET` the status URL | `{"status", "requestedAt", "downloadDetails"?: {"dataUrl", "expiresAt"}}` |
    /// | `GET` the data URL | the CSV |
    ///
    /// The request and the status need `X-Apple-CloudKit-Management-Token` (a ``DataExportToken`` of that team and app;
    /// `401` otherwise). Dates are the devices' clock's UTC days: `startDate` at most 30 days back, `endDate` after it
    /// and at least a day back (`400` otherwise); an unknown channel is `404`. The same request within 24 hours gets
    /// the same status URL, which answers `PROCESSING` for the first polls
    /// (``APNsEmulator/Configuration/dataExportProcessingPolls``).
    func dataExport(_ request: EmulatorRequest) -> EmulatorResponse {
        let segments = request.pathSegments.map(String.init)
        switch (request.method, segments.count) {
        case ("POST", 10)
        where segments[2] == "apns" && segments[3] == "teams" && segments[5] == "appId" && segments[7] == "datasetName" && segments[9] == "request":
            return self.requestExport(request, teamID: segments[4], bundleID: segments[6], dataset: segments[8])
        case ("GET", 4) where segments[2] == "status":
            return self.exportStatus(request, id: segments[3])
        case ("GET", 4) where segments[2] == "data" && segments[3].hasSuffix(".csv"):
            return self.exportData(id: String(segments[3].dropLast(4)))
        default:
            return Self.exportError(404, "no such data export endpoint")
        }
    }

    private struct ExportRequestBody: Decodable {
        let startDate: String?
        let endDate: String?
        let dataDownloadUrlExpiresInMinutes: Int?
        let channelId: String?
    }

    private func requestExport(_ request: EmulatorRequest, teamID: String, bundleID: String, dataset: String) -> EmulatorResponse {
        guard let token = self.exportToken(request), token.teamID == teamID, token.bundleID == bundleID else {
            return Self.exportError(401, "the data export token is invalid")
        }
        guard let dataset = DataExportBook.Dataset(rawValue: dataset) else { return Self.exportError(400, "unknown dataset") }
        guard let body = try? JSONDecoder().decode(ExportRequestBody.self, from: Data(request.body.readableBytesView)),
            let startDay = body.startDate.flatMap(DataExportBook.day), let endDay = body.endDate.flatMap(DataExportBook.day),
            let minutes = body.dataDownloadUrlExpiresInMinutes, (20...60).contains(minutes)
        else {
            return Self.exportError(400, "the request is badly formed: startDate, endDate (yyyy-MM-dd) and dataDownloadUrlExpiresInMinutes (20–60)")
        }
        let configuration = self.state.configuration
        return self.state.withLock { contents in
            let now = contents.deviceNow
            let today = DeliveryTally.day(now + configuration.dataExportClockOffset)
            guard startDay >= today - 30, endDay > startDay, endDay <= today - 1 else {
                return Self.exportError(400, "startDate is at most 30 days back; endDate is after it and at least a day back")
            }
            var channelID: String?
            if dataset == .channelMetrics {
                guard let id = body.channelId, !id.isEmpty else { return Self.exportError(400, "channelId is required") }
                guard contents.channels.channel(id, bundleID: bundleID) != nil || contents.dataExports.tally.channels[bundleID]?[id] != nil else {
                    return Self.exportError(404, "the channel identifier isn't found")
                }
                channelID = id
            }
            let key = DataExportBook.RequestKey(
                bundleID: bundleID,
                dataset: dataset.rawValue,
                channelID: channelID,
                startDay: startDay,
                endDay: endDay
            )
            let export = contents.dataExports.export(
                key,
                dataset: dataset,
                now: now,
                processingPolls: configuration.dataExportProcessingPolls,
                privacyThreshold: configuration.dataExportPrivacyThreshold
            )
            return .json(
                [
                    "statusUrl": "\(contents.dataExports.baseURL)/v1/dataExports/status/\(export.id)",
                    "requestedAt": DataExportBook.iso(export.requestedAt),
                ]
            )
        }
    }

    private func exportStatus(_ request: EmulatorRequest, id: String) -> EmulatorResponse {
        guard let token = self.exportToken(request) else { return Self.exportError(401, "the data export token is invalid") }
        return self.state.withLock { contents in
            guard let export = contents.dataExports.poll(id), export.bundleID == token.bundleID else {
                return Self.exportError(400, "the request is badly formed: no such export")
            }
            var answer = StatusBody(status: export.outcome, requestedAt: DataExportBook.iso(export.requestedAt))
            if export.outcome == "SUCCESS" {
                answer.downloadDetails = .init(
                    dataUrl: "\(contents.dataExports.baseURL)/v1/dataExports/data/\(export.id).csv",
                    expiresAt: DataExportBook.iso(contents.deviceNow + 3600)
                )
            }
            return .json(answer)
        }
    }

    private struct StatusBody: Encodable {
        struct DownloadDetails: Encodable {
            let dataUrl: String
            let expiresAt: String
        }
        let status: String
        let requestedAt: String
        var downloadDetails: DownloadDetails?
    }

    private func exportData(id: String) -> EmulatorResponse {
        guard let export = self.state.withLock({ $0.dataExports.exports[id] }), export.outcome == "SUCCESS" else {
            return Self.exportError(404, "no such file")
        }
        return EmulatorResponse(status: 200, headers: [("content-type", "text/csv; charset=utf-8")], body: ByteBuffer(string: export.csv))
    }

    private func exportToken(_ request: EmulatorRequest) -> DataExportToken? {
        guard case .present(let text) = request.single("x-apple-cloudkit-management-token") else { return nil }
        return self.state.withLock { $0.dataExports.tokens[text] }
    }

    private static func exportError(_ status: Int, _ reason: String) -> EmulatorResponse {
        .json(["reason": reason], status: status)
    }
}
