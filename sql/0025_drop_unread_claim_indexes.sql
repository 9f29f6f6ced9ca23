-- updates_claimed and owed_pushes_claimed (0005) were made for a heartbeat that renewed every claim of a dispatcher
-- by its id. The heartbeat now renews only its round's claims, by their row ids, and every statement that names
-- claimed_by also names the rows' ids, read through the primary key. updates_claimed still took an entry at every
-- claim, its predicate being the claimed status: without it an accepted update writes 1,884 bytes of WAL instead of
-- 1,955-1,960. The fan-out claim's count of an app's fan-outs in flight reads updates_feed_due instead. Once
-- statistics taken during a backlog put that claim's estimated cost past jit_above_cost, PostgreSQL compiled it, for
-- up to 815 ms; the service's connections now compile no plan (jit = off, LivecastApplication).
DROP INDEX updates_claimed;
DROP INDEX owed_pushes_claimed;
