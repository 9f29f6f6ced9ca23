import Hummingbird
import LivecastStore
import Logging

/// `GET /v1/apps/{bundleId}/events?after=&types=&limit=` (backend): the app's event feed, oldest first.
///
/// The answer is `{"events": [...], "next": "<cursor>", "hasMore": bool}`. `next` is always there: the cursor of the
/// page's last event, else the `after` given (`0-0` when none), so a backend polls with it and never misses or
/// repeats an event (``Events``).
struct EventController: APIController {
    let events: Events

    func addRoutes(to routes: RouteRegistrar) {
        routes.app(.get, "/v1/apps/{bundleId}/events", role: .backend) { request, context, scope in
            let parameters = request.uri.queryParameters
            let limit = try parameters.pageLimit()
            let after = try parameters.get("after").map { text throws(StoreError) in try EventCursor(parsing: text, field: "after") } ?? .start
            // An empty name (`types=`, `a,,b`) is refused as unknown, not read as no filter.
            let names = parameters.getAll("types").flatMap { $0.split(separator: ",", omittingEmptySubsequences: false).map { String($0) } }
            let types = try EventType.parse(names, field: "types")
            let entries = try await self.events.logging(to: context.logger).page(appID: scope.appID, after: after, types: types, limit: limit + 1)
            let shown = entries.prefix(limit)
            let next = shown.last?.cursor ?? after
            var body = #"{"events":["#
            body += shown.map(\.json).joined(separator: ",")
            body += #"],"hasMore":\#(entries.count > limit),"next":"\#(next)"}"#
            return Response.json(text: body.utf8)
        }
    }
}
