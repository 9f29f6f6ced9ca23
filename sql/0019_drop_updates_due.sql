-- updates_due (every unfinished update by due time, 0003) lost its last reader when the feed fan-out's search moved
-- to updates_feed_due (0015): standalone activities' updates are claimed per app through updates_due_per_app, and
-- what counts unfinished updates (the outbox gauge, the console) reads that index as well. Yet every accepted update
-- and every claim still wrote an entry into it (a claim changes status and not_before, so it is never a HOT update).
DROP INDEX updates_due;
