-- A registration of a device already stored looks its rows up by key in register_push_to_start_token (0008, 0017).
-- Like an import's look-ups (0026), on a table without statistics (a new database, before autovacuum's first
-- ANALYZE) those went through push_to_start_tokens_last_seen and read the app's every token: 33 ms and 100,000 rows
-- for each such registration among 100,000 tokens. A batch with such a registration now analyzes the table first
-- when it has outgrown its statistics (analyze_if_outgrown, 0026): a look-up in pg_class and a file size when it has
-- not. A batch of new devices only, the launch peak's, does neither. Otherwise unchanged from 0022.
CREATE OR REPLACE FUNCTION register_push_to_start_tokens(
    app_ids bigint[], device_ids text[], attributes_types text[], tokens text[], user_ids text[], user_set boolean[],
    os_versions text[], os_set boolean[], frequent_updates boolean[]
) RETURNS TABLE (request integer, outcome text) LANGUAGE plpgsql AS $$
DECLARE
    created bigint[];
BEGIN
    WITH requested AS (
        SELECT r.app_id, r.device_id, r.attributes_type, r.token, r.frequent, r.n,
            CASE WHEN r.has_user THEN r.user_id END AS user_id, CASE WHEN r.has_os THEN r.os_version END AS os_version
        FROM unnest(app_ids, device_ids, attributes_types, tokens, user_ids, user_set, os_versions, os_set, frequent_updates)
            WITH ORDINALITY AS r(app_id, device_id, attributes_type, token, user_id, has_user, os_version, has_os, frequent, n)
    ), inserted AS (
        INSERT INTO push_to_start_tokens (app_id, device_id, attributes_type, token, user_id, os_version, frequent_updates_enabled)
        SELECT q.app_id, q.device_id, q.attributes_type, q.token, q.user_id, q.os_version, q.frequent FROM requested AS q ORDER BY q.n
        ON CONFLICT DO NOTHING
        RETURNING push_to_start_tokens.app_id, push_to_start_tokens.device_id, push_to_start_tokens.attributes_type,
            push_to_start_tokens.token
    )
    SELECT array_agg(first.n) INTO created FROM (
        SELECT min(q.n) AS n FROM inserted AS i
        JOIN requested AS q ON (q.app_id, q.token, q.device_id, q.attributes_type) = (i.app_id, i.token, i.device_id, i.attributes_type)
        GROUP BY i.app_id, i.token
    ) AS first;
    IF coalesce(array_length(created, 1), 0) < coalesce(array_length(app_ids, 1), 0) THEN
        PERFORM analyze_if_outgrown('push_to_start_tokens');
    END IF;
    RETURN QUERY
    SELECT r.n::integer,
        CASE WHEN r.n = ANY (created) THEN 'created'
        ELSE register_push_to_start_token(r.app_id, r.device_id, r.attributes_type, r.token,
            CASE WHEN r.has_user THEN r.user_id END, CASE WHEN r.has_os THEN r.os_version END, r.frequent) END
    FROM unnest(app_ids, device_ids, attributes_types, tokens, user_ids, user_set, os_versions, os_set, frequent_updates)
        WITH ORDINALITY AS r(app_id, device_id, attributes_type, token, user_id, has_user, os_version, has_os, frequent, n)
    ORDER BY r.n;
END
$$;
