-- A group commit's push-to-start registrations (PushToStartRegistrar), written together: the new devices' tokens by
-- one INSERT … ON CONFLICT DO NOTHING for the whole batch, and only the others by register_push_to_start_token (0017)
-- each. At a launch peak nearly every registration is a new device's; a call a row took 11-16% longer than this for
-- batches of 8 new devices, and 35-45% longer for batches of 64 (pgbench, one connection).
--
-- The batch comes out as if its registrations had run one after another: first those the insert wrote, in order,
-- then the others in order. They arrived together, so that is one order they could have arrived in. Each row the
-- insert wrote is one registration's (the first, when a batch names the same device, type and token twice); the
-- others see it, as any later registration would.
-- Returns each registration's place in the arrays (from 1) and what it did, as register_push_to_start_token does.
CREATE FUNCTION register_push_to_start_tokens(
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
