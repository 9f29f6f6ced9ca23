-- An accepted activity update supersedes the activity's older updates that APNs asked to retry (pending after a
-- try). The batch of accepted updates (InsertActivityUpdatesStatement) looked them up in a plan made once per
-- connection, while the outbox was small; that plan read the whole outbox, 3-4 ms a batch by 12,000 updates and
-- growing until autovacuum's next ANALYZE, to find the few rows in retry. They get an index of their own, and the
-- batch supersedes them through this function, which never reads them by a sequential scan: whatever the table's
-- statistics say, the index holds only the rows in retry.
CREATE INDEX updates_retrying ON updates (activity_id) WHERE status = 'pending' AND attempts > 0;

-- Supersedes each activity's updates in retry that are older than the timestamp beside it; returns how many.
CREATE FUNCTION supersede_retried_updates(p_activity_ids bigint[], p_timestamps bigint[]) RETURNS integer
LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
    superseded integer;
BEGIN
    UPDATE updates u SET status = 'superseded', completed_at = now()
    FROM unnest(p_activity_ids, p_timestamps) AS r(activity_id, timestamp)
    WHERE u.activity_id = r.activity_id AND u.status = 'pending' AND u.attempts > 0 AND u.timestamp < r.timestamp;
    GET DIAGNOSTICS superseded = ROW_COUNT;
    RETURN superseded;
END
$$;
