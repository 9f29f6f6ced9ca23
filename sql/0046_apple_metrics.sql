-- Apple's numbers beside ours (#67): the credentials of Apple's data export (a CloudKit management token, sealed under
-- the master key), what each export last did, Apple's daily figures as exported, and the days where they diverge
-- from Livecast's own, each of which writes an event.

-- One app's data-export credentials; the token is shown never again.
CREATE TABLE apple_metrics_credentials (
    app_id bigint PRIMARY KEY REFERENCES apps ON DELETE CASCADE,
    team_id text NOT NULL,
    -- The app's bundle id as Apple's export names it (usually the app's own).
    apple_app_id text NOT NULL,
    token_sealed bytea NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- Each export an app fetches (one dataset, and for channel metrics one channel; '' for none): the last day it holds
-- and how its last attempt went, so a failure shows in the app's record.
CREATE TABLE apple_metrics_exports (
    app_id bigint NOT NULL REFERENCES apps ON DELETE CASCADE,
    dataset text NOT NULL CHECK (dataset IN ('deliverymetrics', 'broadcastchannelmetrics', 'broadcastapplicationmetric')),
    channel_id text NOT NULL DEFAULT '',
    fetched_through date,
    last_attempt_at timestamptz,
    last_success_at timestamptz,
    last_error text,
    last_error_at timestamptz,
    PRIMARY KEY (app_id, dataset, channel_id)
);

-- Apple's broadcast figures per day: one channel's, or the whole app's (channel_id ''). -1 is Apple's "too few
-- subscribers", kept as Apple wrote it.
CREATE TABLE apple_broadcast_days (
    app_id bigint NOT NULL REFERENCES apps ON DELETE CASCADE,
    channel_id text NOT NULL,
    day date NOT NULL,
    published bigint NOT NULL,
    delivered bigint NOT NULL,
    subscriptions bigint NOT NULL,
    unique_subscribers bigint,
    fetched_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, channel_id, day)
);

-- Apple's device-push figures per day, push type and status (delivered, stored, discarded, …).
CREATE TABLE apple_delivery_days (
    app_id bigint NOT NULL REFERENCES apps ON DELETE CASCADE,
    day date NOT NULL,
    push_type text NOT NULL,
    status text NOT NULL,
    count bigint NOT NULL,
    fetched_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, day, push_type, status)
);

-- Livecast's own figures per day, kept as the job snapshots them from the outbox and deliveries, which the reaper
-- prunes after a week: a day's figure only ever grows (late pushes), never shrinks with pruning. subject is a channel
-- id, or a push type.
CREATE TABLE livecast_daily_counts (
    app_id bigint NOT NULL REFERENCES apps ON DELETE CASCADE,
    day date NOT NULL,
    subject_kind text NOT NULL CHECK (subject_kind IN ('channel', 'pushType')),
    subject text NOT NULL,
    sent bigint NOT NULL,
    accepted bigint NOT NULL,
    PRIMARY KEY (app_id, day, subject_kind, subject)
);

-- Livecast's device pushes of an app by the day its updates were made (the report and the snapshot read them).
CREATE INDEX updates_app_created ON updates (app_id, created_at);

-- A day where Apple's figures and Livecast's diverge past the threshold: for a channel, or a push type. Written once;
-- its insert writes the event.
CREATE TABLE delivery_divergences (
    app_id bigint NOT NULL REFERENCES apps ON DELETE CASCADE,
    day date NOT NULL,
    subject_kind text NOT NULL CHECK (subject_kind IN ('channel', 'pushType')),
    subject text NOT NULL,
    data jsonb NOT NULL,
    flagged_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, day, subject_kind, subject)
);

CREATE FUNCTION delivery_divergences_emit_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO events (app_id, type, subject_kind, subject_id, data)
    SELECT n.app_id, 'delivery.diverged', CASE WHEN n.subject_kind = 'channel' THEN 'channel' ELSE 'app' END,
           CASE WHEN n.subject_kind = 'channel' THEN n.subject ELSE (SELECT a.bundle_id FROM apps a WHERE a.id = n.app_id) END,
           n.data || jsonb_build_object('day', to_char(n.day, 'YYYY-MM-DD'))
    FROM new_rows n;
    RETURN NULL;
END $$;
CREATE TRIGGER delivery_divergences_emit_insert AFTER INSERT ON delivery_divergences REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION delivery_divergences_emit_inserted();
