import Hummingbird

extension Console {
    /// `GET /console/assets/console.css`, `console.js` and `favicon.svg` (which every page names as its icon, so
    /// a browser asks for no `/favicon.ico`): no session needed (the sign-in page uses them).
    func addAssetRoutes(to router: Router<APIRequestContext>) {
        router.get("/console/assets/favicon.svg") { _, _ in
            Self.asset(ConsoleAssets.icon, type: "image/svg+xml")
        }
        router.get("/console/assets/console.css") { _, _ in
            Self.asset(ConsoleAssets.stylesheet, type: "text/css; charset=utf-8")
        }
        router.get("/console/assets/console.js") { _, _ in
            Self.asset(ConsoleAssets.script, type: "text/javascript; charset=utf-8")
        }
    }

    private static func asset(_ text: String, type: String) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: type, .cacheControl: "public, max-age=3600", .xContentTypeOptions: "nosniff"],
            body: .init(byteBuffer: ByteBuffer(string: text))
        )
    }
}
