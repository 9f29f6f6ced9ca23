-- A big fan-out spreads over every worker of every instance (issue 53). The worker that claims a feed's update or
-- end broadcasts to the channel, then splits the token-based followers it has yet to walk into slices: runs of
-- activity ids, (lower_id, upper_id], so each follower is in exactly one. Any worker of any instance claims a slice
-- under a lease and walks it with checkpoints, as it would the whole update; another takes it over when its lease
-- runs out. The update stays 'dispatching' (unclaimed, `sliced`) until its last slice is done, then it is 'sent',
-- or 'failed' if a slice was given up.
--
-- Per target, order holds across updates: a slice is claimed only when no older update's unfinished slice
-- overlaps its range, so two updates of one feed may be in flight on different slices, never on one follower.
ALTER TABLE updates ADD COLUMN sliced boolean NOT NULL DEFAULT false;

CREATE TABLE fan_out_slices (
    id bigserial PRIMARY KEY,
    update_id bigint NOT NULL REFERENCES updates ON DELETE CASCADE,
    app_id bigint NOT NULL REFERENCES apps ON DELETE CASCADE,
    feed_id bigint NOT NULL REFERENCES feeds ON DELETE CASCADE,
    -- The followers (activity ids) after lower_id, up to and including upper_id.
    lower_id bigint NOT NULL,
    upper_id bigint NOT NULL CHECK (upper_id > lower_id),
    -- The last follower walked; lower_id until the first checkpoint.
    cursor_id bigint NOT NULL,
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'dispatching', 'sent', 'failed')),
    claimed_by uuid,
    not_before timestamptz NOT NULL DEFAULT now(),
    -- Claims in a row without a checkpoint.
    attempts integer NOT NULL DEFAULT 0,
    UNIQUE (update_id, lower_id)
);
CREATE INDEX fan_out_slices_due ON fan_out_slices (update_id, lower_id) WHERE status IN ('pending', 'dispatching');
CREATE INDEX fan_out_slices_feed ON fan_out_slices (feed_id, update_id) WHERE status IN ('pending', 'dispatching');

-- New slices wake a feed worker on every instance, as a new feed update does.
CREATE FUNCTION notify_fan_out_slices() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('livecast_outbox', 'feed');
    RETURN NULL;
END
$$;
CREATE TRIGGER fan_out_slices_added AFTER INSERT ON fan_out_slices FOR EACH STATEMENT EXECUTE FUNCTION notify_fan_out_slices();
