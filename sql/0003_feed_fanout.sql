-- Feed fan-out: starts for an audience, one checkpoint for every kind of fan-out, claims fenced by their
-- dispatcher, starts recorded per device, and the priority-10 budget.

-- The checkpoint is the last follower handled: activities.id for a feed's update or end, push_to_start_tokens.id
-- for a start.
ALTER TABLE updates RENAME COLUMN cursor_activity_id TO cursor_id;
-- A start's audience: the devices or users listed, or everyone with the feed's attributes type.
ALTER TABLE updates ADD COLUMN audience_kind text CHECK (audience_kind IN ('devices', 'users', 'everyone'));
ALTER TABLE updates ADD COLUMN audience text[];
-- The payload for targets on the feed's channel: the broadcast of an update or end, or the start of an iOS 18
-- device (with input-push-channel). `payload` is the device-token form.
ALTER TABLE updates ADD COLUMN channel_payload text;
-- The dispatcher holding the claim: a dispatcher whose lease ran out finds its checkpoints refused.
ALTER TABLE updates ADD COLUMN claimed_by uuid;
-- Whether the priority-10 budget sent this update at priority 5 instead.
ALTER TABLE updates ADD COLUMN priority_downgraded boolean NOT NULL DEFAULT false;
-- The dispatcher's claim also takes back rows whose lease ran out (status 'dispatching'):
-- SELECT … WHERE status IN ('pending', 'dispatching') AND not_before <= now() ORDER BY not_before, id.
DROP INDEX updates_pending;
CREATE INDEX updates_due ON updates (not_before, id) WHERE status IN ('pending', 'dispatching');

-- A start is sent at most once per device and feed: a row per device started, written before its push.
CREATE TABLE feed_starts (
    feed_id bigint NOT NULL REFERENCES feeds ON DELETE CASCADE,
    device_id text NOT NULL,
    update_id bigint NOT NULL REFERENCES updates ON DELETE CASCADE,
    started_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (feed_id, device_id)
);

-- Priority-10 updates accepted per app and hour, against apps.priority10_hourly_cap.
CREATE TABLE priority_budget (
    app_id bigint NOT NULL REFERENCES apps ON DELETE CASCADE,
    hour timestamptz NOT NULL,
    used integer NOT NULL CHECK (used >= 0),
    PRIMARY KEY (app_id, hour)
);
