import Foundation
import LivecastTesting
@testable import LivecastServer
import Testing

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

    /// `METHOD /path` for each operation under `paths:`: paths are the keys indented by two spaces, operations
    /// the HTTP-method keys indented by four beneath them.
    static func documentedRoutes() throws -> Set<String> {
        let url = Fixtures.repositoryRoot.appendingPathComponent("Sources/LivecastServer/Resources/openapi.yaml")
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n")
        let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options"]
        var routes: Set<String> = []
        var inPaths = false
        var path: String?
        for line in lines {
            if !line.hasPrefix(" ") {
                inPaths = line == "paths:"
                continue
            }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":"), !line.hasPrefix("   ") {
                path = String(line.dropFirst(2).dropLast())
            } else if line.hasPrefix("    "), !line.hasPrefix("     "), let path {
                let key = line.dropFirst(4).prefix { $0 != ":" }
                if methods.contains(String(key)) { routes.insert("\(key.uppercased()) \(path)") }
            }
        }
        return routes
    }
}
