-- Livecast's schema, first version. Every row below apps belongs to one app (app_id): apps never see each
-- other's data, and an app's rows can be partitioned away from the others'. Dates that go into payloads are
-- UNIX seconds (bigint); bookkeeping dates are timestamptz. JSON from backends is kept as text, byte for byte.

-- One iOS app in one APNs environment, with the key that signs its provider tokens.
CREATE TABLE apps (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    bundle_id text NOT NULL CHECK (bundle_id <> '' AND bundle_id NOT LIKE '%.push-type.%'),
    environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
    team_id text NOT NULL CHECK (team_id ~ '^[A-Z0-9]{10}$'),
    key_id text NOT NULL CHECK (key_id ~ '^[A-Z0-9]{10}$'),
    -- The .p8 key sealed with AES-GCM under the master key (nonce, ciphertext, tag), or a path to read it from.
    signing_key_sealed bytea,
    signing_key_path text,
    -- Priority-10 pushes per hour before the excess is sent at priority 5; NULL: no cap.
    priority10_hourly_cap integer CHECK (priority10_hourly_cap >= 0),
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (bundle_id, environment),
    CHECK ((signing_key_sealed IS NULL) <> (signing_key_path IS NULL))
);

-- API keys: a public prefix to find the key, and a hash of the secret; the secret itself is never stored.
CREATE TABLE api_keys (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id bigint NOT NULL REFERENCES apps ON DELETE CASCADE,
    role text NOT NULL CHECK (role IN ('backend', 'operator', 'admin')),
    prefix text NOT NULL UNIQUE,
    secret_hash bytea NOT NULL CHECK (length(secret_hash) = 32),
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);
-- Listing an app's keys.
CREATE INDEX api_keys_app ON api_keys (app_id);

-- Push-to-start tokens: one per device and ActivityAttributes type. A rotation invalidates the old row and
-- inserts the new one in one transaction.
CREATE TABLE push_to_start_tokens (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id bigint NOT NULL REFERENCES apps ON DELETE CASCADE,
    device_id text NOT NULL,
    attributes_type text NOT NULL,
    token text NOT NULL CHECK (token ~ '^[0-9a-f]+$' AND length(token) % 2 = 0),
    user_id text,
    os_version text,
    frequent_updates_enabled boolean NOT NULL DEFAULT true,
    registered_at timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    invalidated_at timestamptz,
    invalidation_reason text,
    -- For 410 answers: when APNs learnt the token was invalid (milliseconds since 1970).
    apns_invalid_since_ms bigint
);
-- One live token per device and attributes type.
CREATE UNIQUE INDEX push_to_start_tokens_live ON push_to_start_tokens (app_id, device_id, attributes_type)
    WHERE invalidated_at IS NULL;
-- A token belongs to one row of one app (an app is one environment); re-registering it revives that row.
CREATE UNIQUE INDEX push_to_start_tokens_token ON push_to_start_tokens (app_id, token);
-- Starting a feed for everyone with an attributes type, walked in keyset order.
CREATE INDEX push_to_start_tokens_audience ON push_to_start_tokens (app_id, attributes_type, id)
    WHERE invalidated_at IS NULL;
-- Starting a feed for given users.
CREATE INDEX push_to_start_tokens_user ON push_to_start_tokens (app_id, user_id)
    WHERE invalidated_at IS NULL AND user_id IS NOT NULL;

-- Feeds: the live story a backend tells (a game, a delivery), followed by activities.
CREATE TABLE feeds (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id bigint NOT NULL REFERENCES apps ON DELETE CASCADE,
    feed_key text NOT NULL CHECK (feed_key <> ''),
    attributes_type text NOT NULL,
    attributes text NOT NULL,
    content_state text,
    state text NOT NULL DEFAULT 'created' CHECK (state IN ('created', 'active', 'ended')),
    -- The timestamp of the last accepted start, update or end (UNIX seconds): the ordering floor.
    last_timestamp bigint,
    stale_after_seconds integer CHECK (stale_after_seconds > 0),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    ended_at timestamptz,
    UNIQUE (app_id, feed_key)
);

-- Broadcast channels, as created at APNs.
CREATE TABLE channels (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id bigint NOT NULL REFERENCES apps ON DELETE CASCADE,
    channel_id text NOT NULL,
    storage_policy smallint NOT NULL CHECK (storage_policy IN (0, 1)),
    feed_id bigint REFERENCES feeds ON DELETE SET NULL,
    -- orphan: created at APNs but not fully recorded; missing: APNs no longer has it.
    state text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'orphan', 'retired', 'missing')),
    created_at timestamptz NOT NULL DEFAULT now(),
    retired_at timestamptz,
    UNIQUE (app_id, channel_id)
);
-- At most one live channel per feed.
CREATE UNIQUE INDEX channels_one_per_feed ON channels (feed_id) WHERE feed_id IS NOT NULL AND state = 'active';
-- Counting an app's channels against APNs' cap of 10,000.
CREATE INDEX channels_live ON channels (app_id) WHERE state <> 'retired';

-- Live Activities, token-based (activity_tokens) or channel-based (channel_id).
CREATE TABLE activities (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id bigint NOT NULL REFERENCES apps ON DELETE CASCADE,
    -- ActivityKit's id for the activity, as the app reports it.
    activity_key text NOT NULL CHECK (activity_key <> ''),
    attributes_type text NOT NULL,
    feed_id bigint REFERENCES feeds ON DELETE SET NULL,
    channel_id bigint REFERENCES channels,
    device_id text,
    user_id text,
    os_version text,
    state text NOT NULL DEFAULT 'active' CHECK (state IN ('starting', 'active', 'ended', 'dismissed')),
    last_timestamp bigint,
    stale_date bigint,
    dismissal_date bigint,
    started_at timestamptz NOT NULL DEFAULT now(),
    ended_at timestamptz,
    UNIQUE (app_id, activity_key)
);
-- Fan-out: a feed's running followers in keyset order (WHERE feed_id = $1 AND id > $cursor ORDER BY id).
CREATE INDEX activities_followers ON activities (feed_id, id) WHERE state IN ('starting', 'active');

-- Update tokens of token-based activities, with their history: a rotation invalidates the old row and inserts
-- the next generation in one transaction.
CREATE TABLE activity_tokens (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id bigint NOT NULL REFERENCES apps ON DELETE CASCADE,
    activity_id bigint NOT NULL REFERENCES activities ON DELETE CASCADE,
    token text NOT NULL CHECK (token ~ '^[0-9a-f]+$' AND length(token) % 2 = 0),
    generation integer NOT NULL CHECK (generation > 0),
    registered_at timestamptz NOT NULL DEFAULT now(),
    invalidated_at timestamptz,
    invalidation_reason text,
    apns_invalid_since_ms bigint,
    UNIQUE (activity_id, generation)
);
-- One live update token per activity (also the fan-out's join from activities to their token).
CREATE UNIQUE INDEX activity_tokens_live ON activity_tokens (activity_id) WHERE invalidated_at IS NULL;
-- A token belongs to one activity of one app.
CREATE UNIQUE INDEX activity_tokens_token ON activity_tokens (app_id, token);

-- The outbox: one row per accepted start, update or end, written in the transaction that accepts it.
CREATE TABLE updates (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id bigint NOT NULL REFERENCES apps ON DELETE CASCADE,
    feed_id bigint REFERENCES feeds ON DELETE CASCADE,
    activity_id bigint REFERENCES activities ON DELETE CASCADE,
    event text NOT NULL CHECK (event IN ('start', 'update', 'end')),
    timestamp bigint NOT NULL CHECK (timestamp > 0),
    -- The parts of the payload, as accepted (JSON as text, byte for byte).
    content_state text,
    alert text,
    stale_date bigint,
    dismissal_date bigint,
    relevance_score double precision,
    priority smallint NOT NULL CHECK (priority IN (5, 10)),
    idempotency_key text,
    -- The answer given to the request, replayed for a retried request with the same idempotency key.
    response text,
    status text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'dispatching', 'sent', 'superseded', 'failed')),
    -- Fan-out checkpoint: the last follower (activities.id) handled, and whether the channel got its broadcast.
    cursor_activity_id bigint NOT NULL DEFAULT 0,
    channel_done boolean NOT NULL DEFAULT false,
    -- When a worker may claim the row (retries back off; coalescing holds a same-second update).
    not_before timestamptz NOT NULL DEFAULT now(),
    attempts integer NOT NULL DEFAULT 0,
    sent_count bigint NOT NULL DEFAULT 0,
    failed_count bigint NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    completed_at timestamptz,
    CHECK ((feed_id IS NULL) <> (activity_id IS NULL))
);
-- Replaying a request with the same Idempotency-Key.
CREATE UNIQUE INDEX updates_idempotency ON updates (app_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
-- The dispatcher's claim: SELECT … WHERE status = 'pending' AND not_before <= now() ORDER BY not_before, id
-- FOR UPDATE SKIP LOCKED.
CREATE INDEX updates_pending ON updates (not_before, id) WHERE status = 'pending';
-- A feed's or an activity's latest updates (ordering checks, coalescing, status reads).
CREATE INDEX updates_feed ON updates (feed_id, id) WHERE feed_id IS NOT NULL;
CREATE INDEX updates_activity ON updates (activity_id, id) WHERE activity_id IS NOT NULL;

-- Delivery attempts worth keeping: failures per target, and each channel broadcast.
CREATE TABLE deliveries (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    update_id bigint NOT NULL REFERENCES updates ON DELETE CASCADE,
    target_kind text NOT NULL CHECK (target_kind IN ('device', 'channel')),
    target text NOT NULL,
    status integer,
    reason text,
    apns_id text,
    attempted_at timestamptz NOT NULL DEFAULT now()
);
-- An update's failures by reason (GET …/updates/{id}).
CREATE INDEX deliveries_update ON deliveries (update_id, reason);
