-- Delivery under pressure: pushes APNs asked to retry later are carried forward until delivered, superseded or
-- past their deadline; what is finally given up is kept as a dead letter; work is claimed per app.

-- A push still owed to one target of an update: APNs answered 429 or 5xx, or the connection was lost before its
-- answer. A dispatcher claims it when due (claimed_by, not_before as its lease), sends it again, and deletes it once
-- delivered, refused for good, superseded by a newer update's push to the same target, or moved to dead_letters.
CREATE TABLE owed_pushes (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id bigint NOT NULL REFERENCES apps ON DELETE CASCADE,
    update_id bigint NOT NULL REFERENCES updates ON DELETE CASCADE,
    -- activity: activities.id (sent to its live update token); push_to_start: push_to_start_tokens.id;
    -- channel: channels.id.
    target_kind text NOT NULL CHECK (target_kind IN ('activity', 'push_to_start', 'channel')),
    target_id bigint NOT NULL,
    -- An iOS 18 device's start goes with the update's channel payload (input-push-channel).
    channel_payload boolean NOT NULL DEFAULT false,
    -- Tries so far, and what APNs (or the transport) said to the last one.
    attempts integer NOT NULL CHECK (attempts > 0),
    last_status integer,
    last_reason text NOT NULL,
    not_before timestamptz NOT NULL,
    -- After this it is given up: the activity's end of life, or --retry-deadline after it was first owed.
    deadline timestamptz NOT NULL,
    claimed_by uuid,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (update_id, target_kind, target_id)
);
-- The dispatcher's claim: due rows per app, oldest first.
CREATE INDEX owed_pushes_due ON owed_pushes (app_id, not_before, id);
-- Supersession: a newer update's push to the same target replaces the owed one.
CREATE INDEX owed_pushes_target ON owed_pushes (target_kind, target_id, update_id);

-- What Livecast finally gave up on: an update that could not reach a target before its deadline (or a fan-out that
-- kept failing without progress), with the reason and the tries.
CREATE TABLE dead_letters (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id bigint NOT NULL REFERENCES apps ON DELETE CASCADE,
    update_id bigint NOT NULL REFERENCES updates ON DELETE CASCADE,
    -- activity, push_to_start or channel as in owed_pushes; feed: a fan-out given up as a whole.
    target_kind text NOT NULL CHECK (target_kind IN ('activity', 'push_to_start', 'channel', 'feed')),
    target_id bigint NOT NULL,
    reason text NOT NULL,
    attempts integer NOT NULL CHECK (attempts >= 0),
    last_try_at timestamptz NOT NULL DEFAULT now(),
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dead_letters_app ON dead_letters (app_id, id);

-- Standalone activity updates are claimed per app, oldest first.
CREATE INDEX updates_due_per_app ON updates (app_id, not_before, id) WHERE status IN ('pending', 'dispatching');
-- The heartbeat renews the leases of one dispatcher's claims.
CREATE INDEX updates_claimed ON updates (claimed_by) WHERE status = 'dispatching';
CREATE INDEX owed_pushes_claimed ON owed_pushes (claimed_by) WHERE claimed_by IS NOT NULL;
