-- The dispatcher's claim of an app's due standalone activity updates (each the oldest unfinished of its activity),
-- locked oldest first. Two things made the claim the outbox's costliest statement:
--
-- * Planning it took 0.9-1.5 ms a claim, ten times running it: `updates` has ten indexes, most of them partial, and
--   the statement read the table three times. A PL/pgSQL function keeps its plan for the session; the claim around it
--   (Dispatcher.claimActivityUpdates) is left to update the rows it names, by primary key.
-- * Between two autovacuums the partial indexes on `status` keep an entry for every update sent since the last one,
--   pointing at a dead row. With a bitmap scan, which PostgreSQL chose whenever the statistics said few updates were
--   unfinished, every claim visited all those rows again: 14 ms a claim at 47,000 such entries, 9.7 s of the 13 s
--   PostgreSQL spent on statements at 1,000 updates a second. A plain index scan marks such an entry dead in the
--   index the first time it meets its row, and later scans skip it without reading the table. So this function scans
--   by index only, in the order of updates_due_per_app (app, due time, id), and stops after the batch.
--
-- The plan it keeps must not depend on the statistics of the moment it was made (a fresh database's outbox is empty):
-- no sequential scan either, as in 0018. It counts as one row (as the functions of 0021 do), so the claim around it
-- finds each update and its activity by primary key.
CREATE FUNCTION due_activity_updates(p_app_id bigint, p_limit bigint) RETURNS SETOF bigint
LANGUAGE plpgsql ROWS 1 SET enable_bitmapscan = off SET enable_seqscan = off AS $$
BEGIN
    RETURN QUERY
    SELECT u.id FROM updates u
    WHERE u.app_id = p_app_id AND u.status IN ('pending', 'dispatching') AND u.not_before <= now()
      AND u.activity_id IS NOT NULL
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
