import Foundation
import Hummingbird
import LivecastStore
import Logging

/// `POST /v1/apps/{bundleId}/push-to-start-tokens:import` and `POST /v1/apps/{bundleId}/activities:import` (backend):
/// up to ``RegistrationImporter/maximumRowsPerRequest`` rows, a JSON array or NDJSON by `Content-Type`, each row
/// registered or refused on its own (``RegistrationImporter``); `200` with every row's result and the counts. Imports
/// run a few at a time (``ImportSlots``): one over the caps is `429` before its body is read.
struct ImportController: APIController {
    let importer: RegistrationImporter
    /// The bulk imports running on this instance.
    let slots: ImportSlots

    func addRoutes(to routes: RouteRegistrar) {
        for kind in RegistrationImporter.Kind.allCases {
            routes.app(.post, "/v1/apps/{bundleId}/\(Self.collection(of: kind)):import", role: .backend) { request, context, scope in
                let format = try ImportText.Format(contentType: request.headers[.contentType])
                return try await self.slots.withSlot(appID: scope.appID) { () async throws -> Response in
                    let text = try ImportText(try await request.bodyBytes(upTo: RegistrationImporter.maximumRequestBytes), format: format)
                    guard text.count <= RegistrationImporter.maximumRowsPerRequest else {
                        throw APIError.tooManyRows(text.count, limit: RegistrationImporter.maximumRowsPerRequest)
                    }
                    let report = try await self.importer.logging(to: context.logger).run(kind, appID: scope.appID, text: text)
                    return Response.json(text: try report.json())
                }
            }
        }
    }

    /// The path segment of the single registrations of a kind.
    private static func collection(of kind: RegistrationImporter.Kind) -> String {
        switch kind {
        case .pushToStart: "push-to-start-tokens"
        case .activities: "activities"
        }
    }
}

extension ImportText.Format {
    /// The format a request's `Content-Type` names: `application/x-ndjson` for NDJSON, `application/json` (or none)
    /// for a JSON array; parameters such as `charset` are ignored.
    /// - Throws: ``APIError`` `415 unsupported_media_type` for any other type.
    init(contentType: String?) throws {
        let mediaType = contentType?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        switch mediaType {
        case nil, "application/json": self = .jsonArray
        case "application/x-ndjson": self = .ndjson
        case let mediaType?:
            throw APIError(
                .unsupportedMediaType,
                code: "unsupported_media_type",
                "an import is application/json (a JSON array of rows) or application/x-ndjson (one row a line), not \(mediaType)"
            )
        }
    }
}
