-- The claim of standalone activity updates (due_activity_updates, 0023) asks, for each due update, whether an older
-- update of its activity is unfinished. That probe was meant for updates_activity_unfinished (activity, id), but
-- updates_due_per_app (app, due time, id) served it too: both are limited to unfinished updates, and the outbox's
-- due index stays small (the claim's scans mark what was sent dead, and a full page drops those entries), so the
-- planner took it whenever the statistics said the outbox was nearly empty, as they do once it has drained. With
-- no condition on its leading columns, that probe reads the whole index for every candidate: over a backlog of
-- 30,000 pending updates (APNs slow or down, then back), 158 pages a candidate and 14 ms to claim 50, growing with
-- the backlog, against 3 pages a candidate through updates_activity_unfinished.
--
-- The due index now leaves out feeds' updates (a feed's update has no activity: 0001's check), which the probe does
-- not rule out, so the probe can only use the index made for it. Feeds' updates fall due through updates_feed_due
-- (0015), and the claim says `feed_id IS NULL` so that it still reads this index in order.
CREATE INDEX updates_due_standalone ON updates (app_id, not_before, id)
    WHERE status IN ('pending', 'dispatching') AND feed_id IS NULL;
DROP INDEX updates_due_per_app;

-- The outbox's unfinished updates, for those who count them (the metrics, an app's overview): no single index holds
-- them all now, so each half is read through its own (a condition on the view reaches both).
CREATE VIEW unfinished_updates AS
    SELECT * FROM updates WHERE status IN ('pending', 'dispatching') AND feed_id IS NULL
    UNION ALL
    SELECT * FROM updates WHERE status IN ('pending', 'dispatching') AND feed_id IS NOT NULL;

CREATE OR REPLACE FUNCTION due_activity_updates(p_app_id bigint, p_limit bigint) RETURNS SETOF bigint
LANGUAGE plpgsql ROWS 1 SET enable_bitmapscan = off SET enable_seqscan = off AS $$
BEGIN
    RETURN QUERY
    SELECT u.id FROM updates u
    WHERE u.app_id = p_app_id AND u.status IN ('pending', 'dispatching') AND u.not_before <= now()
      AND u.feed_id IS NULL
      -- An earlier unfinished update of the same activity goes first: a scalar subquery, which PostgreSQL runs as
      -- an index probe for each candidate, where NOT EXISTS could become a join that reads every unfinished update.
      AND (SELECT e.id FROM updates e
           WHERE e.activity_id = u.activity_id AND e.id < u.id AND e.status IN ('pending', 'dispatching')
           LIMIT 1) IS NULL
    ORDER BY u.not_before, u.id
    LIMIT p_limit
    FOR UPDATE OF u SKIP LOCKED;
END
$$;
