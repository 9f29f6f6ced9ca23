-- A bulk import of push-to-start tokens looks each row's device up by key (PushToStartTokens+Import). On a table
-- whose statistics are missing (never analyzed) or were taken when it held a handful of rows, the planner counts
-- app_id as nearly unique and probes through any index that starts with it: it took push_to_start_tokens_last_seen,
-- and read the app's every row for each key. Importing 30,000 tokens into a new database took 55.7 s that way
-- (538 rows a second), and 1.2 s once the table was analyzed; autovacuum's ANALYZE comes a minute or more later,
-- after the import. Analyzing after loading is what PostgreSQL's documentation advises for bulk loads.
--
-- analyze_if_outgrown(t) analyzes t when it has grown past twice its size (in pages) as of its last ANALYZE or
-- VACUUM, plus 8 pages, and answers whether it did. The check reads pg_class and the table's file size only. A
-- caller that finds another one analyzing the same table skips instead of waiting for it: it holds advisory lock
-- (5, the table's oid) while it analyzes (namespaces 1 to 4 are the send locks' and the reaper's). ANALYZE by a role
-- that does not own the table skips it with a warning.
CREATE FUNCTION analyze_if_outgrown(t regclass) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    counted_pages integer;
BEGIN
    SELECT relpages INTO counted_pages FROM pg_class WHERE oid = t;
    IF pg_relation_size(t) / current_setting('block_size')::bigint <= 2 * counted_pages + 8 THEN
        RETURN false;
    END IF;
    IF NOT pg_try_advisory_xact_lock(5, t::oid::integer) THEN
        RETURN false;
    END IF;
    EXECUTE format('ANALYZE %s', t);
    RETURN true;
END
$$;
