-- What a client key's registrations are held to (#66 §2, §4, §5).

-- A push-to-start token may serve several attributes types of one device (apps whose types share a token): unique per
-- type, no longer per app. It is live on one device only: registering it from another device moves it there
-- (register_push_to_start_token below), holding the token being the proof.
CREATE UNIQUE INDEX push_to_start_tokens_token_type ON push_to_start_tokens (app_id, token, attributes_type);
DROP INDEX push_to_start_tokens_token;
ALTER INDEX push_to_start_tokens_token_type RENAME TO push_to_start_tokens_token;

-- Client devices remember the address (its rate-limit key: an IPv4 address, an IPv6 /64) that brought them, so one
-- address gets only a share of the app's new devices an hour; a device whose registration carried a valid identity
-- assertion is vouched for by the app's backend and counts against neither.
ALTER TABLE client_devices ADD COLUMN address text;
ALTER TABLE client_devices ADD COLUMN vouched boolean NOT NULL DEFAULT false;
DROP INDEX client_devices_recent;
CREATE INDEX client_devices_recent ON client_devices (app_id, first_seen_at) WHERE NOT vouched;
CREATE INDEX client_devices_recent_by_address ON client_devices (app_id, address, first_seen_at) WHERE NOT vouched AND address IS NOT NULL;
-- Pruning devices gone for longer than the token expiry (the reaper).
CREATE INDEX client_devices_first_seen ON client_devices (app_id, first_seen_at);

-- The client keys' request buckets per device and per address, shared by every instance: a token bucket per key,
-- taken by take_client_bucket. Unlogged: a transaction that writes only these rows commits without waiting for a
-- WAL flush, and a crash only refills the buckets. full_at: when the bucket is full again, after which its row says
-- nothing a missing row does not (the reaper deletes it).
CREATE UNLOGGED TABLE client_buckets (
    app_id bigint NOT NULL,
    key text NOT NULL,
    tokens double precision NOT NULL,
    updated_at timestamptz NOT NULL,
    full_at timestamptz NOT NULL,
    PRIMARY KEY (app_id, key)
);
CREATE INDEX client_buckets_full ON client_buckets (full_at);

-- Takes one request from a bucket of p_burst refilled at p_rate a second. Returns NULL when taken, else the seconds
-- until the bucket has a request again.
CREATE FUNCTION take_client_bucket(p_app_id bigint, p_key text, p_rate double precision, p_burst double precision)
RETURNS double precision LANGUAGE plpgsql AS $$
DECLARE
    level double precision;
BEGIN
    INSERT INTO client_buckets AS b (app_id, key, tokens, updated_at, full_at)
    VALUES (p_app_id, p_key, p_burst - 1, now(), now() + make_interval(secs => 1 / p_rate))
    ON CONFLICT (app_id, key) DO UPDATE
        SET tokens = least(p_burst, b.tokens + extract(epoch FROM now() - b.updated_at) * p_rate) - 1, updated_at = now(),
            full_at = now() + make_interval(secs => (p_burst - least(p_burst, b.tokens + extract(epoch FROM now() - b.updated_at) * p_rate) + 1) / p_rate)
        WHERE least(p_burst, b.tokens + extract(epoch FROM now() - b.updated_at) * p_rate) >= 1;
    IF FOUND THEN
        RETURN NULL;
    END IF;
    SELECT least(p_burst, tokens + extract(epoch FROM now() - updated_at) * p_rate) INTO level
    FROM client_buckets WHERE app_id = p_app_id AND key = p_key;
    RETURN greatest((1 - level) / p_rate, 0.001);
END
$$;

-- One client key request's gate, in one round trip: a request from the device's bucket and from its address's
-- (p_address NULL: none), then, for a registration (p_admit), the device's admission. A device seen before is
-- admitted at once; one vouched for by an identity assertion too (and counted apart); a new one while the app admitted
-- fewer than p_ceiling other new devices in the last hour and its address fewer than p_address_share, serialised per
-- app by a transaction-scoped advisory lock (namespace 5), so that instances racing at the ceiling admit no more than
-- it. Returns what refused it (device_rate, address_rate, app_ceiling, address_share) and the seconds until it may
-- come again, or NULLs when it may go ahead.
DROP FUNCTION admit_client_device(bigint, text, integer);
CREATE FUNCTION client_gate(
    p_app_id bigint, p_device_id text, p_address text, p_device_rate double precision, p_device_burst double precision,
    p_address_rate double precision, p_address_burst double precision, p_admit boolean, p_vouched boolean,
    p_ceiling integer, p_address_share integer
) RETURNS TABLE (refusal text, retry_after double precision) LANGUAGE plpgsql AS $$
DECLARE
    wait double precision;
    recent integer;
    oldest timestamptz;
BEGIN
    wait := take_client_bucket(p_app_id, 'device:' || p_device_id, p_device_rate, p_device_burst);
    IF wait IS NOT NULL THEN
        RETURN QUERY SELECT 'device_rate', wait;
        RETURN;
    END IF;
    IF p_address IS NOT NULL THEN
        wait := take_client_bucket(p_app_id, 'address:' || p_address, p_address_rate, p_address_burst);
        IF wait IS NOT NULL THEN
            RETURN QUERY SELECT 'address_rate', wait;
            RETURN;
        END IF;
    END IF;
    IF NOT p_admit THEN
        RETURN;
    END IF;
    PERFORM 1 FROM client_devices WHERE app_id = p_app_id AND device_id = p_device_id;
    IF FOUND THEN
        RETURN;
    END IF;
    IF p_vouched THEN
        INSERT INTO client_devices (app_id, device_id, address, vouched) VALUES (p_app_id, p_device_id, p_address, true)
        ON CONFLICT DO NOTHING;
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock(5, (p_app_id % 2147483647)::int);
    SELECT count(*), min(first_seen_at) INTO recent, oldest FROM (
        SELECT first_seen_at FROM client_devices
        WHERE app_id = p_app_id AND NOT vouched AND first_seen_at > now() - interval '1 hour'
        ORDER BY first_seen_at LIMIT p_ceiling
    ) AS hour;
    IF recent >= p_ceiling THEN
        RETURN QUERY SELECT 'app_ceiling', greatest(extract(epoch FROM oldest + interval '1 hour' - now()), 1)::double precision;
        RETURN;
    END IF;
    IF p_address IS NOT NULL THEN
        SELECT count(*), min(first_seen_at) INTO recent, oldest FROM (
            SELECT first_seen_at FROM client_devices
            WHERE app_id = p_app_id AND address = p_address AND NOT vouched AND first_seen_at > now() - interval '1 hour'
            ORDER BY first_seen_at LIMIT p_address_share
        ) AS hour;
        IF recent >= p_address_share THEN
            RETURN QUERY SELECT 'address_share', greatest(extract(epoch FROM oldest + interval '1 hour' - now()), 1)::double precision;
            RETURN;
        END IF;
    END IF;
    INSERT INTO client_devices (app_id, device_id, address) VALUES (p_app_id, p_device_id, p_address) ON CONFLICT DO NOTHING;
END
$$;

-- A registration: as in 0033, and now
-- - a token live on another device moves here (those rows are invalidated, reason 'moved', or, for this type,
--   re-pointed at this device): holding the token is the proof;
-- - one device may hold one token under several attributes types;
-- - a client key's registration of a new type must fit under the device's cap of live tokens (p_cap): its
--   client_devices row is locked first (register_push_to_start_tokens), so parallel registrations of one device
--   cannot pass the cap together. Returns 'device_limit' when it does not fit.
DROP FUNCTION register_push_to_start_tokens(bigint[], text[], text[], text[], text[], boolean[], text[], boolean[], boolean[], boolean[]);
DROP FUNCTION register_push_to_start_token(bigint, text, text, text, text, text, boolean, boolean);

CREATE FUNCTION register_push_to_start_token(
    p_app_id bigint, p_device_id text, p_attributes_type text, p_token text, p_user_id text, p_os_version text,
    p_frequent_updates_enabled boolean, p_unproven boolean, p_cap integer
) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    live_id bigint;
    live_token text;
    same_type record;
    moved boolean;
BEGIN
    -- Serialise registrations of one device and type: lock its live row, if any; then the rows holding the token.
    SELECT id, token INTO live_id, live_token FROM push_to_start_tokens
    WHERE app_id = p_app_id AND device_id = p_device_id AND attributes_type = p_attributes_type AND invalidated_at IS NULL
    FOR UPDATE;
    PERFORM 1 FROM push_to_start_tokens WHERE app_id = p_app_id AND token = p_token ORDER BY id FOR UPDATE;
    IF live_id IS NOT NULL AND live_token = p_token THEN
        UPDATE push_to_start_tokens SET user_id = p_user_id, os_version = p_os_version,
            frequent_updates_enabled = p_frequent_updates_enabled, last_seen_at = now(), unproven = unproven AND p_unproven
        WHERE id = live_id;
        moved := false;
    ELSE
        IF live_id IS NULL AND p_cap IS NOT NULL AND (
            SELECT count(*) FROM push_to_start_tokens
            WHERE app_id = p_app_id AND device_id = p_device_id AND invalidated_at IS NULL) >= p_cap THEN
            RETURN 'device_limit';
        END IF;
        IF live_id IS NOT NULL THEN
            UPDATE push_to_start_tokens SET invalidated_at = now(), invalidation_reason = 'rotated' WHERE id = live_id;
        END IF;
        SELECT id, device_id, invalidated_at IS NULL AS is_live INTO same_type FROM push_to_start_tokens
        WHERE app_id = p_app_id AND token = p_token AND attributes_type = p_attributes_type;
        moved := same_type.id IS NOT NULL AND same_type.is_live AND same_type.device_id <> p_device_id;
        IF same_type.id IS NOT NULL THEN
            -- The token's row for this type comes back, or moves here from another device: it is this device's now.
            UPDATE push_to_start_tokens SET device_id = p_device_id, user_id = p_user_id, os_version = p_os_version,
                frequent_updates_enabled = p_frequent_updates_enabled, registered_at = now(), last_seen_at = now(),
                unproven = CASE WHEN invalidated_at IS NULL THEN unproven AND p_unproven ELSE p_unproven END,
                invalidated_at = NULL, invalidation_reason = NULL, apns_invalid_since_ms = NULL
            WHERE id = same_type.id;
        ELSE
            INSERT INTO push_to_start_tokens (app_id, device_id, attributes_type, token, user_id, os_version, frequent_updates_enabled, unproven)
            VALUES (p_app_id, p_device_id, p_attributes_type, p_token, p_user_id, p_os_version, p_frequent_updates_enabled, p_unproven);
        END IF;
    END IF;
    -- The token's rows of other types on other devices move too: they are invalidated there.
    UPDATE push_to_start_tokens SET invalidated_at = now(), invalidation_reason = 'moved'
    WHERE app_id = p_app_id AND token = p_token AND device_id <> p_device_id AND invalidated_at IS NULL;
    moved := moved OR FOUND;
    RETURN CASE WHEN moved THEN 'moved' WHEN live_id IS NULL THEN 'created' WHEN live_token = p_token THEN 'unchanged' ELSE 'rotated' END;
END
$$;

-- As in 0033, with each registration's cap (0 for a backend's: none) and the rules above: new tokens by one insert (a
-- client key's only while they fit under its device's cap, counted with the batch's earlier rows; a token that two
-- devices of the batch name goes one by one, so that it moves in order), the others one by one. The client devices of the batch are locked first, in order, so a device's registrations in
-- parallel batches take turns at its cap.
CREATE FUNCTION register_push_to_start_tokens(
    app_ids bigint[], device_ids text[], attributes_types text[], tokens text[], user_ids text[], user_set boolean[],
    os_versions text[], os_set boolean[], frequent_updates boolean[], unproven boolean[], caps integer[]
) RETURNS TABLE (request integer, outcome text) LANGUAGE plpgsql AS $$
DECLARE
    created bigint[];
BEGIN
    PERFORM 1 FROM client_devices c
    WHERE (c.app_id, c.device_id) IN (
        SELECT r.app_id, r.device_id FROM unnest(app_ids, device_ids, caps) AS r(app_id, device_id, cap) WHERE r.cap > 0)
    ORDER BY c.app_id, c.device_id
    FOR UPDATE;
    WITH requested AS (
        SELECT r.app_id, r.device_id, r.attributes_type, r.token, r.frequent, r.unproven, nullif(r.cap, 0) AS cap, r.n,
            CASE WHEN r.has_user THEN r.user_id END AS user_id, CASE WHEN r.has_os THEN r.os_version END AS os_version,
            row_number() OVER (PARTITION BY r.app_id, r.device_id ORDER BY r.n) AS place
        FROM unnest(app_ids, device_ids, attributes_types, tokens, user_ids, user_set, os_versions, os_set, frequent_updates, unproven, caps)
            WITH ORDINALITY AS r(app_id, device_id, attributes_type, token, user_id, has_user, os_version, has_os, frequent, unproven, cap, n)
    ), inserted AS (
        INSERT INTO push_to_start_tokens (app_id, device_id, attributes_type, token, user_id, os_version, frequent_updates_enabled, unproven)
        SELECT q.app_id, q.device_id, q.attributes_type, q.token, q.user_id, q.os_version, q.frequent, q.unproven
        FROM requested AS q
        WHERE NOT EXISTS (SELECT 1 FROM push_to_start_tokens t WHERE t.app_id = q.app_id AND t.token = q.token)
          AND NOT EXISTS (SELECT 1 FROM requested o WHERE o.app_id = q.app_id AND o.token = q.token AND o.device_id <> q.device_id)
          AND (q.cap IS NULL OR q.place + (
              SELECT count(*) FROM push_to_start_tokens l
              WHERE l.app_id = q.app_id AND l.device_id = q.device_id AND l.invalidated_at IS NULL) <= q.cap)
        ORDER BY q.n
        ON CONFLICT DO NOTHING
        RETURNING push_to_start_tokens.app_id, push_to_start_tokens.device_id, push_to_start_tokens.attributes_type,
            push_to_start_tokens.token
    )
    SELECT array_agg(first.n) INTO created FROM (
        SELECT min(q.n) AS n FROM inserted AS i
        JOIN requested AS q ON (q.app_id, q.token, q.device_id, q.attributes_type) = (i.app_id, i.token, i.device_id, i.attributes_type)
        GROUP BY i.app_id, i.token, i.attributes_type
    ) AS first;
    IF coalesce(array_length(created, 1), 0) < coalesce(array_length(app_ids, 1), 0) THEN
        PERFORM analyze_if_outgrown('push_to_start_tokens');
    END IF;
    RETURN QUERY
    SELECT r.n::integer,
        CASE WHEN r.n = ANY (created) THEN 'created'
        ELSE register_push_to_start_token(r.app_id, r.device_id, r.attributes_type, r.token,
            CASE WHEN r.has_user THEN r.user_id END, CASE WHEN r.has_os THEN r.os_version END, r.frequent, r.unproven, nullif(r.cap, 0)) END
    FROM unnest(app_ids, device_ids, attributes_types, tokens, user_ids, user_set, os_versions, os_set, frequent_updates, unproven, caps)
        WITH ORDINALITY AS r(app_id, device_id, attributes_type, token, user_id, has_user, os_version, has_os, frequent, unproven, cap, n)
    ORDER BY r.n;
END
$$;
