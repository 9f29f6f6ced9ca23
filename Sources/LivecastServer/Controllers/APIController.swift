/// The routes of one resource and what they use, built once with the API (``LivecastAPI``). A handler hands its
/// request's logger to the store (`logging(to: context.logger)`), so the store's log lines carry the request id.
protocol APIController: Sendable {
    /// Adds the resource's routes.
    func addRoutes(to routes: RouteRegistrar)
}
