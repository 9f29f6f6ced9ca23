import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastTesting
import Testing
import Yams

@testable import LivecastServer

/// The OpenAPI document and the router describe the same routes.
@Suite struct OpenAPIDocumentTests {
    @Test func everyRouteIsDocumentedAndEveryDocumentedRouteExists() async throws {
        try await APIFixture.with("openapi_routes") { fixture, _ in
            let routed = Set(fixture.api.makeRouter().routes.map(\.description))
            let documented = try Self.documentedRoutes()
            #expect(routed.subtracting(documented).isEmpty, "routes missing from openapi.yaml: \(routed.subtracting(documented).sorted())")
            #expect(documented.subtracting(routed).isEmpty, "documented routes with no handler: \(documented.subtracting(routed).sorted())")
            #expect(routed.count > 20)
        }
    }

    @Test func theDocumentIsServed() async throws {
        try await APIFixture.with("openapi_served") { _, client in
            let response = try await client.send(.get, "/openapi.yaml", key: nil)
            #expect(response.status == .ok)
            #expect(response.text.hasPrefix("openapi: 3.1.0"))
            #expect(response.headers[.contentType] == "application/yaml")
        }
    }

    /// `METHOD /path` for each operation under `paths`, read with a YAML parser (so the document must be valid YAML).
    static func documentedRoutes() throws -> Set<String> {
        let url = Fixtures.repositoryRoot.appendingPathComponent("Sources/LivecastServer/Resources/openapi.yaml")
        let document = try #require(try Yams.load(yaml: String(contentsOf: url, encoding: .utf8)) as? [String: Any])
        #expect(document["openapi"] as? String == "3.1.0")
        let paths = try #require(document["paths"] as? [String: Any])
        let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options"]
        var routes: Set<String> = []
        for (path, item) in paths {
            for method in (item as? [String: Any] ?? [:]).keys where methods.contains(method) {
                routes.insert("\(method.uppercased()) \(path)")
            }
        }
        return routes
    }
}
