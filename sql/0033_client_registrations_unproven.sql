-- A published client key is anyone's (#52): what it registers is unproven until APNs accepts a push to it.
--
-- A token a client key registered (or moved to a new value) is `unproven`; the first push APNs accepts to it proves
-- it. The invalidation guard (LivecastService's InvalidationGuard) judges only proven tokens once the app's
-- credentials are proven, so a stranger's made-up tokens cannot hold the app's sending: APNs' refusals of unproven
-- tokens invalidate them at once. Tokens registered before this migration, and every token a backend key or an
-- import registers, are proven (the default).
ALTER TABLE push_to_start_tokens ADD COLUMN unproven boolean NOT NULL DEFAULT false;
ALTER TABLE activity_tokens ADD COLUMN unproven boolean NOT NULL DEFAULT false;

-- When APNs first accepted a push of the app under its current credentials and environment: from then on a batch
-- of refusals from unproven tokens alone says nothing about the credentials. NULL: not yet (a new app, or one whose
-- credentials changed), when the guard judges every token of a batch that APNs accepted none of.
ALTER TABLE apps ADD COLUMN apns_proven_at timestamptz;
UPDATE apps SET apns_proven_at = now()
WHERE EXISTS (SELECT 1 FROM updates u WHERE u.app_id = apps.id AND u.sent_count > 0);

-- The devices client keys registered, by their first registration: a per-app ceiling on new ones per hour holds
-- across every instance (admit_client_device).
CREATE TABLE client_devices (
    app_id bigint NOT NULL REFERENCES apps ON DELETE CASCADE,
    device_id text NOT NULL,
    first_seen_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, device_id)
);
CREATE INDEX client_devices_recent ON client_devices (app_id, first_seen_at);

-- Admits a device a client key names: a known one at once; a new one while fewer than p_ceiling new devices were
-- admitted in the app's last hour, serialised per app by a transaction-scoped advisory lock (namespace 5), so that
-- instances racing at the ceiling admit no more than it. Returns NULL when admitted, else the seconds until the
-- oldest admission of the hour leaves it.
CREATE FUNCTION admit_client_device(p_app_id bigint, p_device_id text, p_ceiling integer)
RETURNS double precision LANGUAGE plpgsql AS $$
DECLARE
    recent integer;
    oldest timestamptz;
BEGIN
    PERFORM 1 FROM client_devices WHERE app_id = p_app_id AND device_id = p_device_id;
    IF FOUND THEN
        RETURN NULL;
    END IF;
    PERFORM pg_advisory_xact_lock(5, (p_app_id % 2147483647)::int);
    SELECT count(*), min(first_seen_at) INTO recent, oldest FROM (
        SELECT first_seen_at FROM client_devices
        WHERE app_id = p_app_id AND first_seen_at > now() - interval '1 hour'
        ORDER BY first_seen_at LIMIT p_ceiling
    ) AS hour;
    IF recent >= p_ceiling THEN
        RETURN greatest(extract(epoch FROM oldest + interval '1 hour' - now()), 1);
    END IF;
    INSERT INTO client_devices (app_id, device_id) VALUES (p_app_id, p_device_id) ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

-- The public keys an app's backend signs identity assertions with (ES256 JWTs binding a client key's registration to
-- a user), by the key id the JWT header names.
CREATE TABLE identity_keys (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id bigint NOT NULL REFERENCES apps ON DELETE CASCADE,
    key_id text NOT NULL CHECK (key_id ~ '^[A-Za-z0-9._-]{1,64}$'),
    public_key_pem text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (app_id, key_id)
);

-- Registrations say whether a client key made them (p_unproven): a new or revived row, or a new token, is then
-- unproven; a backend's registration of the same token proves it, a client's leaves it as it was. Otherwise as in
-- 0017 and 0027.
DROP FUNCTION register_push_to_start_tokens(bigint[], text[], text[], text[], text[], boolean[], text[], boolean[], boolean[]);
DROP FUNCTION register_push_to_start_token(bigint, text, text, text, text, text, boolean);

CREATE FUNCTION register_push_to_start_token(
    p_app_id bigint, p_device_id text, p_attributes_type text, p_token text, p_user_id text, p_os_version text,
    p_frequent_updates_enabled boolean, p_unproven boolean
) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    live_id bigint;
    live_token text;
    holder record;
BEGIN
    INSERT INTO push_to_start_tokens (app_id, device_id, attributes_type, token, user_id, os_version, frequent_updates_enabled, unproven)
    VALUES (p_app_id, p_device_id, p_attributes_type, p_token, p_user_id, p_os_version, p_frequent_updates_enabled, p_unproven)
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
            frequent_updates_enabled = p_frequent_updates_enabled, last_seen_at = now(), unproven = unproven AND p_unproven
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
            registered_at = now(), last_seen_at = now(), unproven = p_unproven,
            invalidated_at = NULL, invalidation_reason = NULL, apns_invalid_since_ms = NULL
        WHERE id = holder.id;
    ELSE
        INSERT INTO push_to_start_tokens (app_id, device_id, attributes_type, token, user_id, os_version, frequent_updates_enabled, unproven)
        VALUES (p_app_id, p_device_id, p_attributes_type, p_token, p_user_id, p_os_version, p_frequent_updates_enabled, p_unproven);
    END IF;
    RETURN CASE WHEN live_id IS NULL THEN 'created' ELSE 'rotated' END;
END
$$;

CREATE FUNCTION register_push_to_start_tokens(
    app_ids bigint[], device_ids text[], attributes_types text[], tokens text[], user_ids text[], user_set boolean[],
    os_versions text[], os_set boolean[], frequent_updates boolean[], unproven boolean[]
) RETURNS TABLE (request integer, outcome text) LANGUAGE plpgsql AS $$
DECLARE
    created bigint[];
BEGIN
    WITH requested AS (
        SELECT r.app_id, r.device_id, r.attributes_type, r.token, r.frequent, r.unproven, r.n,
            CASE WHEN r.has_user THEN r.user_id END AS user_id, CASE WHEN r.has_os THEN r.os_version END AS os_version
        FROM unnest(app_ids, device_ids, attributes_types, tokens, user_ids, user_set, os_versions, os_set, frequent_updates, unproven)
            WITH ORDINALITY AS r(app_id, device_id, attributes_type, token, user_id, has_user, os_version, has_os, frequent, unproven, n)
    ), inserted AS (
        INSERT INTO push_to_start_tokens (app_id, device_id, attributes_type, token, user_id, os_version, frequent_updates_enabled, unproven)
        SELECT q.app_id, q.device_id, q.attributes_type, q.token, q.user_id, q.os_version, q.frequent, q.unproven
        FROM requested AS q ORDER BY q.n
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
            CASE WHEN r.has_user THEN r.user_id END, CASE WHEN r.has_os THEN r.os_version END, r.frequent, r.unproven) END
    FROM unnest(app_ids, device_ids, attributes_types, tokens, user_ids, user_set, os_versions, os_set, frequent_updates, unproven)
        WITH ORDINALITY AS r(app_id, device_id, attributes_type, token, user_id, has_user, os_version, has_os, frequent, unproven, n)
    ORDER BY r.n;
END
$$;
