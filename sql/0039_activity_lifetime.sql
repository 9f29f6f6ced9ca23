-- Activities that last as long as the event (#65): a ledger of the push-to-start notifications each device received
-- against its budget, the starts that wait for room (a feed's starts deferred, and renewals), the feed's renewal
-- policy, the links between an activity and the one that renewed it, and what a start rebuilt later carries.

-- What a start rebuilt from the feed carries besides its attributes and content state: the feed's latest stale date
-- and relevance score, and the alert of its latest start, written as each is accepted.
ALTER TABLE feeds ADD COLUMN stale_date bigint;
ALTER TABLE feeds ADD COLUMN relevance_score double precision;
ALTER TABLE feeds ADD COLUMN start_alert text;
-- Renewal: a follower's activity is replaced by push-to-start renewal_before seconds before the activity lifetime, if
-- the feed was updated within renewal_if_updated_within seconds; NULL: not renewed. renewal_alert is the alert the
-- renewal shows (the latest start's, without its sound, when NULL).
ALTER TABLE feeds ADD COLUMN renewal_before integer CHECK (renewal_before > 0);
ALTER TABLE feeds ADD COLUMN renewal_if_updated_within integer CHECK (renewal_if_updated_within > 0);
ALTER TABLE feeds ADD COLUMN renewal_alert text;
ALTER TABLE feeds ADD CONSTRAINT feeds_renewal_whole CHECK ((renewal_before IS NULL) = (renewal_if_updated_within IS NULL));

-- An activity that a renewal replaced, and the one that replaced it.
ALTER TABLE activities ADD COLUMN renewed_from bigint REFERENCES activities ON DELETE SET NULL;
ALTER TABLE activities ADD COLUMN renewed_to bigint REFERENCES activities ON DELETE SET NULL;
-- Whether the reaper planned the follower's renewal (its queued start, in queued_starts, says how it stands).
ALTER TABLE activities ADD COLUMN renewal_planned boolean NOT NULL DEFAULT false;
-- Who dismissed an activity: 'user' when the app reported it gone while it was still running (the user swiped it
-- away: the device is left out of the feed's renewals and later starts), 'device' when it left after its end.
ALTER TABLE activities DROP CONSTRAINT activities_dismissed_by_check;
ALTER TABLE activities ADD CONSTRAINT activities_dismissed_by_check CHECK (dismissed_by IN ('device', 'user', 'reaper'));
ALTER TABLE activities DROP CONSTRAINT activities_ended_by_check;
ALTER TABLE activities ADD CONSTRAINT activities_ended_by_check
    CHECK (ended_by IN ('backend', 'device', 'reaper', 'lifetime', 'renewal'));
-- The renewal planner's walk: running followers not yet planned, by start.
CREATE INDEX activities_unplanned_renewals ON activities (feed_id, started_at)
    WHERE state IN ('starting', 'active') AND NOT renewal_planned AND renewed_to IS NULL AND feed_id IS NOT NULL;
-- Renewed activities still running, whose end the reaper sees to.
CREATE INDEX activities_renewed ON activities (app_id, id) WHERE renewed_to IS NOT NULL AND state IN ('starting', 'active');
-- A device's activities of a feed: starts leave out a device that runs one, or whose user dismissed one.
CREATE INDEX activities_device_feed ON activities (app_id, device_id, feed_id) WHERE device_id IS NOT NULL;

-- When the device's app confirmed a feed's start by registering the activity.
ALTER TABLE feed_starts ADD COLUMN confirmed_at timestamptz;
CREATE INDEX feed_starts_recent ON feed_starts (started_at);

-- The push-to-start ledger: for each device, when it was sent push-to-start notifications within the budget window
-- (oldest first, at most the budget's count), and the newest timestamp they carried, so a later start never carries
-- an older one. Every instance spends it in one statement per page, under the row's lock.
CREATE TABLE start_ledger (
    app_id bigint NOT NULL REFERENCES apps ON DELETE CASCADE,
    device_id text NOT NULL,
    sent_at timestamptz[] NOT NULL,
    last_timestamp bigint NOT NULL,
    PRIMARY KEY (app_id, device_id)
);

-- Starts that wait for their device: a feed's start deferred because the device's budget was spent (or because a
-- newer start had reached it), and renewals. Each is rebuilt from its feed when sent, so it carries the feed's
-- latest content. A dispatcher claims due rows (state 'sending', claimed_by, due_at as its lease), highest relevance
-- first for each device, and settles them: 'sent', or 'dropped' with the reason.
CREATE TABLE queued_starts (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id bigint NOT NULL REFERENCES apps ON DELETE CASCADE,
    feed_id bigint NOT NULL REFERENCES feeds ON DELETE CASCADE,
    -- NULL only for a renewal that cannot be: the activity was registered without a device.
    device_id text,
    kind text NOT NULL CHECK (kind IN ('deferred', 'renewal')),
    -- deferred: the start it belongs to; renewal: NULL.
    update_id bigint REFERENCES updates ON DELETE CASCADE,
    -- renewal: the activity it renews.
    activity_id bigint REFERENCES activities ON DELETE CASCADE,
    relevance_score double precision,
    state text NOT NULL DEFAULT 'waiting' CHECK (state IN ('waiting', 'sending', 'sent', 'dropped')),
    reason text,
    due_at timestamptz NOT NULL,
    claimed_by uuid,
    attempts integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    -- What went out: when, with which timestamp, to which push-to-start token.
    sent_at timestamptz,
    timestamp bigint,
    token_id bigint,
    CHECK ((kind = 'deferred') = (update_id IS NOT NULL)),
    CHECK ((kind = 'renewal') = (activity_id IS NOT NULL)),
    CHECK (device_id IS NOT NULL OR state = 'dropped')
);
CREATE UNIQUE INDEX queued_starts_deferred ON queued_starts (feed_id, device_id) WHERE kind = 'deferred' AND state IN ('waiting', 'sending');
CREATE UNIQUE INDEX queued_starts_renewal ON queued_starts (activity_id) WHERE kind = 'renewal';
-- The dispatcher's claim.
CREATE INDEX queued_starts_due ON queued_starts (app_id, due_at) WHERE state IN ('waiting', 'sending');
-- An update's starts deferred and dropped (GET …/updates/{id}).
CREATE INDEX queued_starts_update ON queued_starts (update_id) WHERE update_id IS NOT NULL;
-- A device's queued starts: one claimed at a time, and the renewal a new activity answers.
CREATE INDEX queued_starts_device ON queued_starts (app_id, device_id, feed_id);

-- activity.renewed: an activity linked to the one that replaced it.
CREATE FUNCTION activities_emit_renewed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO events (app_id, type, subject_kind, subject_id, data)
    SELECT NEW.app_id, 'activity.renewed', 'activity', NEW.activity_key,
        event_activity_data(NEW) || jsonb_build_object('renewedTo', a.activity_key)
    FROM activities a WHERE a.id = NEW.renewed_to;
    RETURN NULL;
END
$$;
CREATE TRIGGER activities_emit_renewed AFTER UPDATE ON activities
    FOR EACH ROW WHEN (OLD.renewed_to IS NULL AND NEW.renewed_to IS NOT NULL) EXECUTE FUNCTION activities_emit_renewed();

-- start.dropped: a deferred start or a renewal that never went out, with the reason.
CREATE FUNCTION queued_starts_emit_dropped() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO events (app_id, type, subject_kind, subject_id, data)
    SELECT NEW.app_id, 'start.dropped', 'feed', f.feed_key, jsonb_strip_nulls(jsonb_build_object(
        'feedKey', f.feed_key, 'attributesType', f.attributes_type, 'deviceId', NEW.device_id, 'kind', NEW.kind,
        'updateId', NEW.update_id, 'activityId', (SELECT a.activity_key FROM activities a WHERE a.id = NEW.activity_id),
        'reason', NEW.reason))
    FROM feeds f WHERE f.id = NEW.feed_id;
    RETURN NULL;
END
$$;
CREATE TRIGGER queued_starts_emit_dropped AFTER UPDATE ON queued_starts
    FOR EACH ROW WHEN (OLD.state <> 'dropped' AND NEW.state = 'dropped') EXECUTE FUNCTION queued_starts_emit_dropped();

-- A start that goes to devices whose user dismissed an activity of the feed too (`includeDismissed`); by default a
-- start leaves them out.
ALTER TABLE updates ADD COLUMN include_dismissed boolean NOT NULL DEFAULT false;

-- Spends each device's push-to-start budget for one start carrying its timestamp, under the ledger row's lock: a
-- device has room when its window holds fewer than p_starts starts and no start to it carried this timestamp or a
-- newer one. Returns the devices that had room (and spent it).
CREATE FUNCTION spend_start_budget(p_app_id bigint, p_devices text[], p_timestamps bigint[], p_starts bigint, p_window float8)
RETURNS SETOF text LANGUAGE sql AS $$
    INSERT INTO start_ledger AS l (app_id, device_id, sent_at, last_timestamp)
    SELECT p_app_id, w.device_id, ARRAY[now()], w.ts FROM unnest(p_devices, p_timestamps) AS w(device_id, ts)
    ON CONFLICT (app_id, device_id) DO UPDATE
        SET sent_at = array(SELECT t FROM unnest(l.sent_at) t WHERE t > now() - make_interval(secs => p_window) ORDER BY t) || now(),
            last_timestamp = excluded.last_timestamp
        WHERE l.last_timestamp < excluded.last_timestamp
          AND cardinality(array(SELECT t FROM unnest(l.sent_at) t WHERE t > now() - make_interval(secs => p_window))) < p_starts
    RETURNING l.device_id
$$;

-- Seconds until a device's push-to-start budget has room again: 0 while it has room.
CREATE FUNCTION start_budget_wait(p_app_id bigint, p_device_id text, p_starts bigint, p_window float8)
RETURNS float8 LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN count(*) < p_starts THEN 0
                ELSE greatest(extract(epoch FROM min(t) + make_interval(secs => p_window) - now()), 0) END::float8
    FROM start_ledger l, unnest(l.sent_at) t
    WHERE l.app_id = p_app_id AND l.device_id = p_device_id AND t > now() - make_interval(secs => p_window)
$$;
