import Foundation
import LivecastTesting
import Testing

/// The commit-msg hook that `scripts/prerequisites.sh` installs holds CONTRIBUTING.md's convention: a subject of at
/// most 72 characters without a final period, then a blank line before the body.
@Suite struct CommitMessageHookTests {
    private func check(_ message: String) async throws -> (status: Int32, stderr: String) {
        let directory = try TemporaryDirectory()
        let file = directory.path("COMMIT_EDITMSG")
        try message.write(toFile: file, atomically: false, encoding: .utf8)
        let hook = Fixtures.repositoryRoot.appendingPathComponent("scripts/git-hooks/commit-msg").path
        let result = try await ExternalProcess.run("/bin/bash", [hook, file])
        return (result.status, result.stderr)
    }

    @Test func aGoodMessagePassesAndEachBrokenRuleIsRefused() async throws {
        #expect(try await self.check("Spend the budget once a batch\n\nWhy, and the figures.\n").status == 0)
        #expect(try await self.check("# a comment\nShort subject\n").status == 0)
        #expect(try await self.check("Merge branch 'x' " + String(repeating: "y", count: 80) + "\n").status == 0)

        let long = try await self.check(String(repeating: "a", count: 73) + "\n")
        #expect(long.status != 0 && long.stderr.contains("73 characters"), "\(long.stderr)")
        #expect(try await self.check(String(repeating: "a", count: 72) + "\n").status == 0)
        #expect(try await self.check("\n# only a comment\n").status != 0, "an empty subject")
        #expect(try await self.check("Subject\nbody at once\n").status != 0, "no blank line")
        #expect(try await self.check("Subject with a period.\n").status != 0)
    }
}
