import ArgumentParser
import NIOHTTP1

/// `import`: bulk registration of push-to-start tokens through `POST /v1/apps/{bundleId}/push-to-start-tokens:import`.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import push-to-start tokens of new devices in batches (JSON arrays of registration rows) and report rows a second.",
        discussion: """
            First posts an empty array: a 404 or 405 means the server has no import endpoint, and the line is \
            `import available=false status=S errors=0`. Otherwise posts --rows rows in batches of --batch, closed \
            loop, and prints `import available=true rows=N rows_per_s=R batches=B batch_p50_ms=… batch_p99_ms=… \
            errors=E`.
            """
    )

    @OptionGroup var stack: StackOptions

    @Option(help: "Rows to import, a multiple of --batch.")
    var rows = 100_000

    @Option(help: "Rows per request.")
    var batch = 10_000

    @Option(help: "Connections, each with one batch in flight.")
    var connections = 2

    func validate() throws {
        guard self.batch > 0, self.rows % self.batch == 0 else { throw ValidationError("--rows must be a multiple of --batch") }
    }

    func run() async throws {
        try await BenchmarkStack.run(self.stack, connections: self.connections) { stack in
            let probe = try await stack.client.send(APIRequest(.POST, "\(stack.appPath)/push-to-start-tokens:import", json: "[]"))
            guard probe.status != 404, probe.status != 405 else {
                Summary.print("import", [("available", "false"), ("status", String(probe.status))], errors: 0, firstError: nil)
                return
            }
            let run = BenchmarkStack.runTag()
            let batch = self.batch
            let result = try await stack.client.closedLoop(requests: self.rows / batch) {
                stack.importBatch(run: run, first: $0 * batch, count: batch)
            }
            let fields = result.percentileFields([50, 99]).map { ("batch_\($0.0)", $0.1) }
            Summary.print(
                "import",
                [
                    ("available", "true"), ("rows", String(result.succeeded * batch)), ("rows_per_s", String(Int(result.rate * Double(batch)))),
                    ("batches", String(result.succeeded)),
                ] + fields,
                errors: result.errors,
                firstError: result.firstError
            )
        }
    }
}
