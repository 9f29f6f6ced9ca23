-- Events out (#54): every lifecycle fact writes an event in the transaction that makes it, and each enabled webhook
-- endpoint that wants the event gets a delivery row in that same transaction, so no statement anywhere can make a
-- fact without its event. Inserts emit through statement-level triggers over their transition tables (a page of
-- feed starts writes its events in one INSERT … SELECT); updates through row-level triggers whose WHEN names the
-- change, which PostgreSQL checks without calling PL/pgSQL, so the many updates that change no state (a timestamp
-- accepted, a claim, a checkpoint, a token seen again) cost nothing.

-- Who ended an activity (or a feed, whose followers its end reaches), and who dismissed an activity. A statement
-- that ends one sets the column, or the transaction says it with the setting livecast.ended_by (the reaper's ends go
-- through the outbox's acceptance like a backend's); absent both, a backend ended it.
ALTER TABLE activities ADD COLUMN ended_by text CHECK (ended_by IN ('backend', 'device', 'reaper', 'lifetime'));
ALTER TABLE activities ADD COLUMN dismissed_by text CHECK (dismissed_by IN ('device', 'reaper'));
ALTER TABLE feeds ADD COLUMN ended_by text CHECK (ended_by IN ('backend', 'reaper'));

CREATE FUNCTION activity_ended_by(a activities) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT coalesce(
        a.ended_by,
        nullif(current_setting('livecast.ended_by', true), ''),
        (SELECT f.ended_by FROM feeds f WHERE f.id = a.feed_id AND f.state = 'ended'),
        CASE WHEN a.state = 'dismissed' THEN 'device' ELSE 'backend' END)
$$;

-- When a feed start was found never to have become an activity within the registration timeout.
ALTER TABLE feed_starts ADD COLUMN unregistered_at timestamptz;
CREATE INDEX feed_starts_unreported ON feed_starts (started_at) WHERE unregistered_at IS NULL;

-- The events. transaction_id orders the pull feed: a reader takes only events of transactions older than every
-- transaction still running (pg_snapshot_xmin), so an event that commits late is never skipped by a cursor.
CREATE TABLE events (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id bigint NOT NULL REFERENCES apps ON DELETE CASCADE,
    type text NOT NULL,
    subject_kind text NOT NULL CHECK (subject_kind IN ('activity', 'feed', 'token', 'update', 'channel', 'app')),
    subject_id text NOT NULL,
    data jsonb NOT NULL,
    occurred_at timestamptz NOT NULL DEFAULT now(),
    transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id()
);
CREATE INDEX events_feed ON events (app_id, transaction_id, id);
CREATE INDEX events_age ON events (occurred_at);

-- Webhook endpoints: where an app's events are POSTed, signed with a per-endpoint secret sealed under the master
-- key (two live during a rotation), with the endpoint's delivery state: one batch in flight under a lease, and the
-- backoff after failures.
CREATE TABLE webhook_endpoints (
    id uuid PRIMARY KEY,
    app_id bigint NOT NULL REFERENCES apps ON DELETE CASCADE,
    url text NOT NULL,
    -- The event types wanted; empty: all.
    event_types text[] NOT NULL DEFAULT '{}',
    enabled boolean NOT NULL DEFAULT true,
    secret_sealed bytea NOT NULL,
    previous_secret_sealed bytea,
    previous_secret_expires_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    consecutive_failures integer NOT NULL DEFAULT 0,
    claimed_by uuid,
    lease_until timestamptz,
    last_success_at timestamptz,
    last_failure_at timestamptz,
    last_failure text
);
CREATE INDEX webhook_endpoints_app ON webhook_endpoints (app_id) WHERE enabled;

-- What each endpoint still owes (pending, deleted once delivered) or gave up on after 24 hours (failed, kept until
-- replayed or pruned with its event).
CREATE TABLE webhook_deliveries (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    endpoint_id uuid NOT NULL REFERENCES webhook_endpoints ON DELETE CASCADE,
    event_id bigint NOT NULL REFERENCES events ON DELETE CASCADE,
    state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'failed')),
    attempts integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    failed_at timestamptz,
    last_error text
);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (endpoint_id, id) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_failed ON webhook_deliveries (endpoint_id, id) WHERE state = 'failed';
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);

-- An event becomes a delivery for every enabled endpoint of its app that wants its type.
CREATE FUNCTION events_enqueue_deliveries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhook_deliveries (endpoint_id, event_id)
    SELECT w.id, e.id FROM new_events e
    JOIN webhook_endpoints w ON w.app_id = e.app_id AND w.enabled
        AND (cardinality(w.event_types) = 0 OR e.type = ANY(w.event_types))
    ORDER BY e.id;
    RETURN NULL;
END
$$;
CREATE TRIGGER events_enqueue AFTER INSERT ON events REFERENCING NEW TABLE AS new_events
    FOR EACH STATEMENT EXECUTE FUNCTION events_enqueue_deliveries();

-- The JSON an activity's events carry.
CREATE FUNCTION event_activity_data(a activities) RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT jsonb_strip_nulls(jsonb_build_object(
        'activityId', a.activity_key,
        'attributesType', a.attributes_type,
        'feedKey', (SELECT f.feed_key FROM feeds f WHERE f.id = a.feed_id),
        'channelId', (SELECT c.channel_id FROM channels c WHERE c.id = a.channel_id),
        'deviceId', a.device_id,
        'userId', a.user_id,
        'state', a.state
    ))
$$;

-- activity.registered (a new running activity, or a start the app reported), activity.ended, activity.dismissed.
CREATE FUNCTION activities_emit_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO events (app_id, type, subject_kind, subject_id, data)
    SELECT n.app_id, 'activity.registered', 'activity', n.activity_key, event_activity_data(n)
    FROM new_rows n WHERE n.state = 'active' ORDER BY n.id;
    RETURN NULL;
END
$$;
CREATE TRIGGER activities_emit_insert AFTER INSERT ON activities REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION activities_emit_inserted();

CREATE FUNCTION activities_emit_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO events (app_id, type, subject_kind, subject_id, data)
    SELECT NEW.app_id, t.type, 'activity', NEW.activity_key, event_activity_data(NEW) || t.extra
    FROM (VALUES
        ('activity.registered', OLD.state = 'starting' AND NEW.state = 'active', '{}'::jsonb, 1),
        ('activity.ended', OLD.state IN ('starting', 'active') AND NEW.state IN ('ended', 'dismissed'),
            jsonb_build_object('endedBy', activity_ended_by(NEW)), 2),
        ('activity.dismissed', OLD.state <> 'dismissed' AND NEW.state = 'dismissed',
            jsonb_build_object('dismissedBy', coalesce(NEW.dismissed_by, 'device')), 3)
    ) AS t(type, happened, extra, step)
    WHERE t.happened
    ORDER BY t.step;
    RETURN NULL;
END
$$;
CREATE TRIGGER activities_emit_update AFTER UPDATE ON activities
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION activities_emit_updated();

-- activity.token_rotated: a later generation of an activity's update token.
CREATE FUNCTION activity_tokens_emit_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO events (app_id, type, subject_kind, subject_id, data)
    SELECT a.app_id, 'activity.token_rotated', 'activity', a.activity_key,
        event_activity_data(a) || jsonb_build_object('token', n.token, 'generation', n.generation)
    FROM new_rows n JOIN activities a ON a.id = n.activity_id
    WHERE n.generation > 1 ORDER BY n.id;
    RETURN NULL;
END
$$;
CREATE TRIGGER activity_tokens_emit_insert AFTER INSERT ON activity_tokens REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION activity_tokens_emit_inserted();

-- token.invalidated: an update token given up for a reason of its own (APNs' answer, a deletion), not replaced by a
-- rotation or retired with a dismissal (those have their own events).
CREATE FUNCTION activity_tokens_emit_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO events (app_id, type, subject_kind, subject_id, data)
    SELECT NEW.app_id, 'token.invalidated', 'token', NEW.token, jsonb_strip_nulls(jsonb_build_object(
        'kind', 'activity', 'token', NEW.token, 'activityId', a.activity_key, 'deviceId', a.device_id,
        'reason', NEW.invalidation_reason, 'apnsInvalidSinceMs', NEW.apns_invalid_since_ms))
    FROM activities a WHERE a.id = NEW.activity_id;
    RETURN NULL;
END
$$;
CREATE TRIGGER activity_tokens_emit_update AFTER UPDATE ON activity_tokens
    FOR EACH ROW WHEN (OLD.invalidated_at IS NULL AND NEW.invalidated_at IS NOT NULL
        AND NEW.invalidation_reason IS DISTINCT FROM 'rotated' AND NEW.invalidation_reason IS DISTINCT FROM 'dismissed')
    EXECUTE FUNCTION activity_tokens_emit_updated();

-- token.invalidated for push-to-start tokens (a rotation is not an invalidation).
CREATE FUNCTION push_to_start_tokens_emit_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO events (app_id, type, subject_kind, subject_id, data)
    VALUES (NEW.app_id, 'token.invalidated', 'token', NEW.token, jsonb_strip_nulls(jsonb_build_object(
        'kind', 'pushToStart', 'token', NEW.token, 'deviceId', NEW.device_id, 'attributesType', NEW.attributes_type,
        'userId', NEW.user_id, 'reason', NEW.invalidation_reason, 'apnsInvalidSinceMs', NEW.apns_invalid_since_ms)));
    RETURN NULL;
END
$$;
CREATE TRIGGER push_to_start_tokens_emit_update AFTER UPDATE ON push_to_start_tokens
    FOR EACH ROW WHEN (OLD.invalidated_at IS NULL AND NEW.invalidated_at IS NOT NULL AND NEW.invalidation_reason IS DISTINCT FROM 'rotated')
    EXECUTE FUNCTION push_to_start_tokens_emit_updated();

-- start.sent (a feed's start going to a device) and start.unregistered (the app never reported it as an activity).
CREATE FUNCTION feed_starts_emit_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO events (app_id, type, subject_kind, subject_id, data)
    SELECT f.app_id, 'start.sent', 'feed', f.feed_key,
        jsonb_build_object('feedKey', f.feed_key, 'attributesType', f.attributes_type, 'deviceId', n.device_id, 'updateId', n.update_id)
    FROM new_rows n JOIN feeds f ON f.id = n.feed_id ORDER BY n.update_id, n.device_id;
    RETURN NULL;
END
$$;
CREATE TRIGGER feed_starts_emit_insert AFTER INSERT ON feed_starts REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION feed_starts_emit_inserted();

CREATE FUNCTION feed_starts_emit_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO events (app_id, type, subject_kind, subject_id, data)
    SELECT f.app_id, 'start.unregistered', 'feed', f.feed_key,
        jsonb_build_object('feedKey', f.feed_key, 'attributesType', f.attributes_type, 'deviceId', NEW.device_id,
            'updateId', NEW.update_id, 'startedAt', NEW.started_at)
    FROM feeds f WHERE f.id = NEW.feed_id;
    RETURN NULL;
END
$$;
CREATE TRIGGER feed_starts_emit_update AFTER UPDATE ON feed_starts
    FOR EACH ROW WHEN (OLD.unregistered_at IS NULL AND NEW.unregistered_at IS NOT NULL) EXECUTE FUNCTION feed_starts_emit_updated();

-- update.completed: an outbox row done (sent, superseded or failed), with its per-target counts.
CREATE FUNCTION updates_emit_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO events (app_id, type, subject_kind, subject_id, data)
    SELECT NEW.app_id, 'update.completed', 'update', NEW.id::text, jsonb_strip_nulls(jsonb_build_object(
        'updateId', NEW.id, 'event', NEW.event, 'timestamp', NEW.timestamp, 'status', NEW.status,
        'feedKey', (SELECT f.feed_key FROM feeds f WHERE f.id = NEW.feed_id),
        'activityId', (SELECT a.activity_key FROM activities a WHERE a.id = NEW.activity_id),
        'counts', jsonb_build_object(
            'sent', NEW.sent_count,
            'failed', NEW.failed_count,
            'superseded', CASE WHEN NEW.status <> 'superseded' THEN 0
                               WHEN NEW.activity_id IS NOT NULL THEN 1
                               ELSE (SELECT count(*) FROM activities a
                                     WHERE a.feed_id = NEW.feed_id AND a.id > NEW.cursor_id
                                       AND a.state IN ('starting', 'active') AND a.channel_id IS NULL)
                                    + CASE WHEN NEW.channel_done THEN 0
                                           ELSE (SELECT count(*) FROM channels c
                                                 WHERE c.feed_id = NEW.feed_id AND c.state = 'active') END END,
            'owed', (SELECT count(*) FROM owed_pushes p WHERE p.update_id = NEW.id))));
    RETURN NULL;
END
$$;
CREATE TRIGGER updates_emit_update AFTER UPDATE ON updates
    FOR EACH ROW WHEN (OLD.completed_at IS NULL AND NEW.completed_at IS NOT NULL) EXECUTE FUNCTION updates_emit_updated();

-- update.refused: a scheduled request refused when its time came.
CREATE FUNCTION scheduled_updates_emit_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO events (app_id, type, subject_kind, subject_id, data)
    VALUES (NEW.app_id, 'update.refused', 'update', NEW.id::text, jsonb_strip_nulls(jsonb_build_object(
        'updateId', NEW.id, 'route', NEW.route, 'target', NEW.target, 'sendAt', NEW.send_at, 'refusal', NEW.refusal)));
    RETURN NULL;
END
$$;
CREATE TRIGGER scheduled_updates_emit_update AFTER UPDATE ON scheduled_updates
    FOR EACH ROW WHEN (OLD.status <> 'refused' AND NEW.status = 'refused') EXECUTE FUNCTION scheduled_updates_emit_updated();

-- push.dead_lettered: a push Livecast gave up on.
CREATE FUNCTION dead_letters_emit_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO events (app_id, type, subject_kind, subject_id, data)
    SELECT n.app_id, 'push.dead_lettered', 'update', n.update_id::text, jsonb_strip_nulls(jsonb_build_object(
        'deadLetterId', n.id, 'updateId', n.update_id, 'targetKind', n.target_kind, 'reason', n.reason,
        'attempts', n.attempts,
        'activityId', CASE WHEN n.target_kind = 'activity' THEN (SELECT a.activity_key FROM activities a WHERE a.id = n.target_id) END,
        'deviceId', CASE WHEN n.target_kind = 'push_to_start' THEN (SELECT t.device_id FROM push_to_start_tokens t WHERE t.id = n.target_id) END,
        'channelId', CASE WHEN n.target_kind = 'channel' THEN (SELECT c.channel_id FROM channels c WHERE c.id = n.target_id) END))
    FROM new_rows n ORDER BY n.id;
    RETURN NULL;
END
$$;
CREATE TRIGGER dead_letters_emit_insert AFTER INSERT ON dead_letters REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION dead_letters_emit_inserted();

-- sending.held / sending.resumed: the invalidation guard holding an app's sending, and its release.
CREATE FUNCTION apps_emit_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO events (app_id, type, subject_kind, subject_id, data)
    SELECT NEW.id, t.type, 'app', NEW.bundle_id, t.data
    FROM (VALUES
        ('sending.held', OLD.sending_held_at IS NULL AND NEW.sending_held_at IS NOT NULL,
            jsonb_strip_nulls(jsonb_build_object('reason', NEW.sending_held_reason, 'heldAt', NEW.sending_held_at))),
        ('sending.resumed', OLD.sending_held_at IS NOT NULL AND NEW.sending_held_at IS NULL,
            jsonb_strip_nulls(jsonb_build_object('heldSince', OLD.sending_held_at, 'reason', OLD.sending_held_reason)))
    ) AS t(type, happened, data)
    WHERE t.happened;
    RETURN NULL;
END
$$;
CREATE TRIGGER apps_emit_update AFTER UPDATE ON apps
    FOR EACH ROW WHEN (OLD.sending_held_at IS DISTINCT FROM NEW.sending_held_at) EXECUTE FUNCTION apps_emit_updated();

-- channel.created, channel.retired, channel.missing_at_apns (the reconciler or a push's answer).
CREATE FUNCTION event_channel_data(c channels) RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT jsonb_strip_nulls(jsonb_build_object(
        'channelId', c.channel_id, 'storagePolicy', c.storage_policy,
        'feedKey', (SELECT f.feed_key FROM feeds f WHERE f.id = c.feed_id), 'state', c.state))
$$;

CREATE FUNCTION channels_emit_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO events (app_id, type, subject_kind, subject_id, data)
    SELECT n.app_id, 'channel.created', 'channel', n.channel_id, event_channel_data(n)
    FROM new_rows n WHERE n.state = 'active' ORDER BY n.id;
    RETURN NULL;
END
$$;
CREATE TRIGGER channels_emit_insert AFTER INSERT ON channels REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION channels_emit_inserted();

CREATE FUNCTION channels_emit_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO events (app_id, type, subject_kind, subject_id, data)
    VALUES (NEW.app_id, CASE NEW.state WHEN 'active' THEN 'channel.created' WHEN 'retired' THEN 'channel.retired'
                                       ELSE 'channel.missing_at_apns' END,
        'channel', NEW.channel_id, event_channel_data(NEW));
    RETURN NULL;
END
$$;
CREATE TRIGGER channels_emit_update AFTER UPDATE ON channels
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state AND NEW.state IN ('active', 'retired', 'missing'))
    EXECUTE FUNCTION channels_emit_updated();

-- An event as the event feed and webhooks show it.
CREATE FUNCTION event_json(e events) RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
        'id', e.id::text,
        'type', e.type,
        'app', (SELECT jsonb_build_object('bundleId', a.bundle_id, 'environment', a.environment) FROM apps a WHERE a.id = e.app_id),
        'occurredAt', to_char(e.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'subject', jsonb_build_object('kind', e.subject_kind, 'id', e.subject_id),
        'data', e.data)
$$;
