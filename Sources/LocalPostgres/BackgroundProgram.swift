package import Subprocess
import Synchronization
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// A program left running (the PostgreSQL server here; `livecast emulator` or nginx in the tests), started with
/// swift-subprocess, with its standard output and error appended to files.
///
/// swift-subprocess runs a program inside a call that returns when the program ends; here that call runs in a task
/// of its own, for as long as the program runs. The program inherits no descriptor above 2 and starts with no signal
/// blocked or ignored; one thread of swift-subprocess's watches every child's end, so none waits on a thread.
package final class BackgroundProgram: Sendable {
    /// The process id.
    package let processID: pid_t
    /// How it ended, once it has (and swift-subprocess has reaped it).
    private let ending: Ending
    /// The task that runs the program to its end.
    private let execution: Task<TerminationStatus, any Error>

    private init(processID: pid_t, ending: Ending, execution: Task<TerminationStatus, any Error>) {
        self.processID = processID
        self.ending = ending
        self.execution = execution
    }

    /// Starts `executable` (a path, or a name looked up in `PATH`) with `arguments`, and returns once it runs.
    /// - Parameters:
    ///   - standardOutput: The file standard output is appended to, created if missing.
    ///   - standardError: The file standard error is appended to; standard output's when `nil`.
    ///   - workingDirectory: Where it runs; this process's directory when `nil`.
    /// - Throws: swift-subprocess's `SubprocessError` when it cannot be started (no such program, say).
    package static func start(
        _ executable: String,
        _ arguments: [String],
        standardOutput: String,
        standardError: String? = nil,
        workingDirectory: String? = nil
    ) async throws -> BackgroundProgram {
        let output = try Self.openForAppending(standardOutput)
        let error = try standardError.map(Self.openForAppending)
        let ending = Ending()
        let (started, onStart) = AsyncStream.makeStream(of: pid_t.self)
        let configuration = Configuration(
            executable: Self.executable(executable),
            arguments: Arguments(arguments),
            workingDirectory: workingDirectory.map { FilePath($0) }
        )
        let execution = Task {
            defer { onStart.finish() }
            let status: TerminationStatus
            if let error {
                status = try await Subprocess.run(
                    configuration,
                    input: .none,
                    output: .fileDescriptor(output, closeAfterSpawningProcess: true),
                    error: .fileDescriptor(error, closeAfterSpawningProcess: true)
                ) { execution in
                    onStart.yield(execution.processIdentifier.value)
                }.terminationStatus
            } else {
                status = try await Subprocess.run(
                    configuration,
                    input: .none,
                    output: .fileDescriptor(output, closeAfterSpawningProcess: true),
                    error: .combinedWithOutput
                ) { execution in
                    onStart.yield(execution.processIdentifier.value)
                }.terminationStatus
            }
            ending.record(status)
            return status
        }
        for await processID in started {
            return BackgroundProgram(processID: processID, ending: ending, execution: execution)
        }
        // It never ran: the task ended with the reason.
        _ = try await execution.value
        throw NotStarted(executable: executable)
    }

    /// The program did not start, and swift-subprocess gave no reason.
    package struct NotStarted: Error, CustomStringConvertible {
        package let executable: String
        package var description: String { "\(self.executable) did not start" }
    }

    /// How it ended, or `nil` while it runs.
    package var terminationStatus: TerminationStatus? {
        self.ending.status
    }

    /// Whether it still runs.
    package var isRunning: Bool {
        self.terminationStatus == nil
    }

    /// Sends it a signal (SIGTERM by default), unless it has ended. (swift-subprocess reaps it just before its end is
    /// recorded here; a signal sent in between goes to a process id that the kernel hands out again only once it has
    /// gone round all the others.)
    package func signal(_ signal: Int32 = SIGTERM) {
        self.ending.unlessEnded { kill(self.processID, signal) }
    }

    /// Waits for it to end. - Returns: how it ended.
    package func waitForExit() async throws -> TerminationStatus {
        try await self.execution.value
    }

    /// Waits for it to end, at most `timeout`. - Returns: how it ended; `nil` if it still runs after the timeout.
    package func waitForExit(timeout: Duration) async -> TerminationStatus? {
        let execution = self.execution
        return await withCheckedContinuation { continuation in
            // Whichever comes first answers; the other finds the answer given.
            let answer = FirstAnswer(continuation)
            Task { answer.give(try? await execution.value) }
            Task {
                try? await Task.sleep(for: timeout)
                answer.give(nil)
            }
        }
    }

    private static func executable(_ executable: String) -> Executable {
        executable.contains("/") ? .path(FilePath(executable)) : .name(executable)
    }

    private static func openForAppending(_ path: String) throws -> FileDescriptor {
        try FileDescriptor.open(
            FilePath(path),
            .writeOnly,
            options: [.create, .append, .closeOnExec],
            permissions: [.ownerReadWrite, .groupRead, .otherRead]
        )
    }
}

/// How a ``BackgroundProgram`` ended, recorded once swift-subprocess has reaped it.
private final class Ending: Sendable {
    private let state = Mutex<TerminationStatus?>(nil)

    var status: TerminationStatus? {
        self.state.withLock { $0 }
    }

    func record(_ status: TerminationStatus) {
        self.state.withLock { $0 = status }
    }

    /// Runs `body` unless the end has been recorded.
    func unlessEnded(_ body: () -> Void) {
        self.state.withLock { status in
            if status == nil { body() }
        }
    }
}

/// A continuation resumed by the first of several racers.
private final class FirstAnswer: Sendable {
    private let continuation: Mutex<CheckedContinuation<TerminationStatus?, Never>?>

    init(_ continuation: CheckedContinuation<TerminationStatus?, Never>) {
        self.continuation = Mutex(continuation)
    }

    func give(_ answer: TerminationStatus?) {
        self.continuation.withLock { $0.take() }?.resume(returning: answer)
    }
}
