-- update.completed, written once per statement instead of once per row (issue 53 §6). The quick lane settles a
-- batch of standalone activity updates in one UPDATE; the row-level trigger ran PL/pgSQL for each row, planned its
-- INSERT with subqueries afresh each time (a custom plan), and each of those INSERTs fired the statement-level
-- webhook trigger on events again. A profile of `livecast-api-benchmark max-updates` put 31 % of the machine's CPU
-- in that trigger (19 % planning), and the updates' max rate doubled with it disabled (2,499 → 4,958/s, side by side
-- on one database). One INSERT per statement, over the transition tables, costs a plan per statement instead.
DROP TRIGGER updates_emit_update ON updates;
DROP FUNCTION updates_emit_updated();

CREATE FUNCTION updates_emit_completed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO events (app_id, type, subject_kind, subject_id, data)
    SELECT n.app_id, 'update.completed', 'update', n.id::text, jsonb_strip_nulls(jsonb_build_object(
        'updateId', n.id, 'event', n.event, 'timestamp', n.timestamp, 'status', n.status,
        'feedKey', f.feed_key,
        'activityId', a.activity_key,
        'counts', jsonb_build_object(
            'sent', n.sent_count,
            'failed', n.failed_count,
            'superseded', CASE WHEN n.status <> 'superseded' THEN 0
                               WHEN n.activity_id IS NOT NULL THEN 1
                               ELSE (SELECT count(*) FROM activities fa
                                     WHERE fa.feed_id = n.feed_id AND fa.id > n.cursor_id
                                       AND fa.state IN ('starting', 'active') AND fa.channel_id IS NULL)
                                    + CASE WHEN n.channel_done THEN 0
                                           ELSE (SELECT count(*) FROM channels c
                                                 WHERE c.feed_id = n.feed_id AND c.state = 'active') END END,
            'owed', (SELECT count(*) FROM owed_pushes p WHERE p.update_id = n.id))))
    FROM new_updates n
    JOIN old_updates o ON o.id = n.id
    LEFT JOIN feeds f ON f.id = n.feed_id
    LEFT JOIN activities a ON a.id = n.activity_id
    WHERE o.completed_at IS NULL AND n.completed_at IS NOT NULL
    ORDER BY n.id;
    RETURN NULL;
END
$$;
CREATE TRIGGER updates_emit_update AFTER UPDATE ON updates REFERENCING OLD TABLE AS old_updates NEW TABLE AS new_updates
    FOR EACH STATEMENT EXECUTE FUNCTION updates_emit_completed();
