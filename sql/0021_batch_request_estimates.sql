-- The update batch's two prepared statements take their requests as arrays and JSON (unnest, jsonb_to_recordset),
-- which the plan PostgreSQL keeps for a prepared statement counts as 10 and 100 rows. Against that many, reading
-- and hashing all of `activities` looks cheaper than an index probe each until the table is large, so every batch
-- of one or two updates read the whole table twice (0.1-0.2 ms each at a thousand activities, more as it grows,
-- until autovacuum's next ANALYZE replans). These functions give the same rows and count as one: the plans probe
-- the indexes. PL/pgSQL, because PostgreSQL would inline an SQL function and take the inner estimate again.

-- The requests of a lock statement: app, activity key, and the request's place (from 1).
CREATE FUNCTION requested_activities(app_ids bigint[], activity_keys text[])
RETURNS TABLE (app_id bigint, activity_key text, n bigint) LANGUAGE plpgsql IMMUTABLE ROWS 1 AS $$
BEGIN
    RETURN QUERY SELECT * FROM unnest(app_ids, activity_keys) WITH ORDINALITY;
END
$$;

-- The outbox rows of an insert statement, from its JSON array of objects with these keys.
CREATE TYPE admitted_update AS (
    app_id bigint, activity_id bigint, event text, "timestamp" bigint, content_state text, stale_date bigint,
    dismissal_date bigint, relevance_score double precision, priority smallint, priority_downgraded boolean,
    coalesced boolean, payload text
);

CREATE FUNCTION admitted_updates(batch jsonb) RETURNS SETOF admitted_update LANGUAGE plpgsql IMMUTABLE ROWS 1 AS $$
BEGIN
    RETURN QUERY SELECT * FROM jsonb_populate_recordset(NULL::admitted_update, batch);
END
$$;
