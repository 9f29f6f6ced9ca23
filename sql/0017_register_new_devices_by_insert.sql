-- register_push_to_start_token (0008) writes a new device's new token with one INSERT … ON CONFLICT DO NOTHING
-- before it looks anything up: the unique indexes themselves say whether the device already has a live token for the
-- type (push_to_start_tokens_live) or the token is known (push_to_start_tokens_token), so the commonest registration
-- at a launch peak needs no plan to find a row. The lookups did need one, and on a fresh database (no ANALYZE yet)
-- the planner took every index with app_id first for equally cheap and read the app's whole
-- push_to_start_tokens_last_seen index for each registration: 1 ms each by 9,000 rows, growing with the table until
-- autovacuum's next ANALYZE. A device or token already there goes on to the rules of 0008, unchanged; a concurrent
-- registration of the same new device now waits for the other to commit and then finds its row there.
CREATE OR REPLACE FUNCTION register_push_to_start_token(
    p_app_id bigint, p_device_id text, p_attributes_type text, p_token text, p_user_id text, p_os_version text,
    p_frequent_updates_enabled boolean
) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    live_id bigint;
    live_token text;
    holder record;
BEGIN
    INSERT INTO push_to_start_tokens (app_id, device_id, attributes_type, token, user_id, os_version, frequent_updates_enabled)
    VALUES (p_app_id, p_device_id, p_attributes_type, p_token, p_user_id, p_os_version, p_frequent_updates_enabled)
    ON CONFLICT DO NOTHING;
    IF FOUND THEN
        RETURN 'created';
    END IF;
    -- Serialise registrations of one device and type: lock its live row, if any.
    SELECT id, token INTO live_id, live_token FROM push_to_start_tokens
    WHERE app_id = p_app_id AND device_id = p_device_id AND attributes_type = p_attributes_type AND invalidated_at IS NULL
    FOR UPDATE;
    SELECT id, device_id, attributes_type, invalidated_at IS NULL AS is_live INTO holder FROM push_to_start_tokens
    WHERE app_id = p_app_id AND token = p_token
    FOR UPDATE;
    IF holder.id IS NOT NULL AND holder.is_live
        AND (holder.device_id <> p_device_id OR holder.attributes_type <> p_attributes_type) THEN
        RETURN 'conflict';
    END IF;
    IF live_id IS NOT NULL AND live_token = p_token THEN
        UPDATE push_to_start_tokens SET user_id = p_user_id, os_version = p_os_version,
            frequent_updates_enabled = p_frequent_updates_enabled, last_seen_at = now()
        WHERE id = live_id;
        RETURN 'unchanged';
    END IF;
    IF live_id IS NOT NULL THEN
        UPDATE push_to_start_tokens SET invalidated_at = now(), invalidation_reason = 'rotated' WHERE id = live_id;
    END IF;
    IF holder.id IS NOT NULL THEN
        -- The token comes back (re-registered after being invalidated): revive its row for this device.
        UPDATE push_to_start_tokens SET device_id = p_device_id, attributes_type = p_attributes_type,
            user_id = p_user_id, os_version = p_os_version, frequent_updates_enabled = p_frequent_updates_enabled,
            registered_at = now(), last_seen_at = now(),
            invalidated_at = NULL, invalidation_reason = NULL, apns_invalid_since_ms = NULL
        WHERE id = holder.id;
    ELSE
        INSERT INTO push_to_start_tokens (app_id, device_id, attributes_type, token, user_id, os_version, frequent_updates_enabled)
        VALUES (p_app_id, p_device_id, p_attributes_type, p_token, p_user_id, p_os_version, p_frequent_updates_enabled);
    END IF;
    RETURN CASE WHEN live_id IS NULL THEN 'created' ELSE 'rotated' END;
END
$$;
