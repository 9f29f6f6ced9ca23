import Testing

@testable import LivecastServer

/// ``DatabaseWatchStateMachine`` without a socket or a wait: probes and work at chosen instants, and what the watch
/// is told to do. Work is named by a string. (A mutating call cannot sit inside `#expect`, so each result is taken
/// first.)
@Suite struct DatabaseWatchStateMachineTests {
    private typealias Machine = DatabaseWatchStateMachine<String>
    private let start = ContinuousClock.now

    private func machine() -> Machine {
        Machine(now: self.start, unansweredPatience: .seconds(30), abandonedWorkGrace: .seconds(1))
    }

    private func at(_ seconds: Double) -> ContinuousClock.Instant { self.start + .seconds(seconds) }

    /// Admits `work`, which must be let in.
    private func admit(_ work: String, deadline: Double?, to machine: inout Machine) throws -> Int {
        let ticket = machine.admit(work, deadline: deadline.map(self.at))
        return try #require(ticket, "\(work) was refused")
    }

    @Test func aRefusedProbeMakesTheDatabaseUnreachableAtOnceAndAnAnswerReachableAgain() throws {
        var machine = self.machine()
        let answered = machine.record(.answered, at: self.at(0.5))
        #expect(answered.change == nil)
        #expect(machine.isReachable && machine.unreachableReason == nil)

        let refused = machine.record(.refused("connections to PostgreSQL are refused"), at: self.at(1))
        #expect(refused.change == .becameUnreachable("connections to PostgreSQL are refused"))
        #expect(!machine.isReachable)
        #expect(machine.unreachableReason == "connections to PostgreSQL are refused")
        let again = machine.record(.refused("still refused"), at: self.at(1.5))
        #expect(again.change == nil, "a change is told once")
        let refusedWork = machine.admit("new", deadline: self.at(10))
        #expect(refusedWork == nil, "new work is refused while unreachable")

        let back = machine.record(.answered, at: self.at(2))
        #expect(back.change == .becameReachable)
        #expect(machine.isReachable && machine.unreachableReason == nil)
        _ = try self.admit("new", deadline: 12, to: &machine)
    }

    @Test func unansweredProbesMakeItUnreachableOnlyOnceNothingAnsweredForThePatience() throws {
        var machine = self.machine()
        let unanswered = Machine.Probe.unanswered("no answer")
        let late = machine.record(unanswered, at: self.at(10))
        #expect(late.change == nil, "a busy machine answers late")
        #expect(machine.isReachable)
        // Work that succeeds is an answer too: the patience counts from it.
        let ticket = try self.admit("request", deadline: 25, to: &machine)
        machine.succeeded(ticket, at: self.at(20))
        let within = machine.record(unanswered, at: self.at(45))
        #expect(within.change == nil, "25 s since the request's answer")
        let past = machine.record(unanswered, at: self.at(50))
        #expect(past.change == .becameUnreachable("no answer"))
        #expect(machine.unreachableReason == "no answer")
    }

    @Test func goingUnreachableCancelsBoundedWorkAndAnswersUnboundedWorkNow() throws {
        var machine = self.machine()
        let bounded = try self.admit("bounded", deadline: 10, to: &machine)
        _ = try self.admit("unbounded", deadline: nil, to: &machine)

        let after = machine.record(.refused("down"), at: self.at(1))
        #expect(after.cancel == ["bounded"])
        #expect(after.answerUnavailable == ["unbounded"])
        #expect(machine.waitingCount == 1, "the bounded work answers for itself as it ends")
        let again = machine.record(.refused("down"), at: self.at(1.5))
        #expect(again.cancel.isEmpty, "cancelled once")

        // It ends before the grace: it was abandoned, so it answers that the database is unavailable.
        let abandoned = machine.failed(bounded)
        #expect(abandoned)
        #expect(machine.waitingCount == 0)
    }

    @Test func abandonedWorkStillRunningAfterTheGraceIsInDoubt() throws {
        var machine = self.machine()
        _ = try self.admit("committing", deadline: 10, to: &machine)
        _ = machine.record(.refused("down"), at: self.at(2))
        let withinGrace = machine.takeLateWork(at: self.at(2.9))
        #expect(withinGrace.inDoubt.isEmpty, "within the grace")
        let late = machine.takeLateWork(at: self.at(3))
        #expect(late.inDoubt == ["committing"])
        #expect(late.late.isEmpty, "in doubt, not timed out")
        #expect(machine.waitingCount == 0)
        let later = machine.takeLateWork(at: self.at(20))
        #expect(later.inDoubt.isEmpty, "answered once")
    }

    @Test func boundedWorkPastItsDeadlineIsLateAndUnboundedWorkNever() throws {
        var machine = self.machine()
        let early = try self.admit("early", deadline: 5, to: &machine)
        _ = try self.admit("later", deadline: 10, to: &machine)
        _ = try self.admit("unbounded", deadline: nil, to: &machine)
        let before = machine.takeLateWork(at: self.at(4.9))
        #expect(before.late.isEmpty)
        let atDeadline = machine.takeLateWork(at: self.at(5))
        #expect(atDeadline.late == ["early"])
        let failedLater = machine.failed(early)
        #expect(!failedLater, "already answered: failing it later changes nothing")
        let muchLater = machine.takeLateWork(at: self.at(60))
        #expect(muchLater.late == ["later"])
        #expect(machine.waitingCount == 1, "unbounded work waits on")
    }

    @Test func workThatFailedWhileReachableIsNotAbandoned() throws {
        var machine = self.machine()
        let ticket = try self.admit("request", deadline: 10, to: &machine)
        let abandoned = machine.failed(ticket)
        #expect(!abandoned)
        #expect(machine.waitingCount == 0)
        let after = machine.record(.refused("down"), at: self.at(1))
        #expect(after.cancel.isEmpty, "an answered ticket is gone")
    }

    @Test func theWatchesChangeToAdmittedWorkIsWhatItIsToldToCancel() throws {
        var machine = self.machine()
        let ticket = try self.admit("request", deadline: 10, to: &machine)
        machine.update(ticket) { $0 += " with its task" }
        let after = machine.record(.refused("down"), at: self.at(1))
        #expect(after.cancel == ["request with its task"])
    }
}
