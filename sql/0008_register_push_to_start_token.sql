-- A device's push-to-start registration as one statement: create, rotate to, or refresh its live token for an
-- attributes type (the rules of PushToStartTokens.register). Registrations that arrive together are written by
-- one statement calling this for each, in one transaction: one commit for the lot (group commit).
-- Returns created, rotated, unchanged, or conflict (another device or attributes type holds the token live).
CREATE FUNCTION register_push_to_start_token(
    p_app_id bigint, p_device_id text, p_attributes_type text, p_token text, p_user_id text, p_os_version text,
    p_frequent_updates_enabled boolean
) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    live_id bigint;
    live_token text;
    holder record;
BEGIN
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
