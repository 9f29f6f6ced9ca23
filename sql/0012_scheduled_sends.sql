-- Scheduled sends: a start, update or end with sendAt waits here until then, and then goes through the same checks
-- and into the outbox (updates) as if it had been posted at that moment, so ordering and coalescing apply when it is
-- sent. Its id comes from the updates' sequence, so one id names a request whether it is scheduled or in the outbox.
CREATE TABLE scheduled_updates (
    id bigint PRIMARY KEY DEFAULT nextval(pg_get_serial_sequence('updates', 'id')),
    app_id bigint NOT NULL REFERENCES apps ON DELETE CASCADE,
    -- What the request was: feedStart, feedUpdate, feedEnd, activityUpdate or activityEnd, to the feed key or activity id.
    route text NOT NULL CHECK (route IN ('feedStart', 'feedUpdate', 'feedEnd', 'activityUpdate', 'activityEnd')),
    target text NOT NULL,
    -- The request's body, byte for byte.
    body text NOT NULL,
    send_at timestamptz NOT NULL,
    status text NOT NULL DEFAULT 'scheduled' CHECK (status IN ('scheduled', 'cancelled', 'accepted', 'refused')),
    -- The outbox row it became, or why it was refused at send_at.
    update_id bigint,
    refusal text,
    idempotency_key text,
    idempotency_scope text,
    idempotency_fingerprint text,
    response text,
    created_at timestamptz NOT NULL DEFAULT now(),
    done_at timestamptz
);
CREATE INDEX scheduled_updates_due ON scheduled_updates (send_at, id) WHERE status = 'scheduled';
CREATE INDEX scheduled_updates_app ON scheduled_updates (app_id, id);
CREATE UNIQUE INDEX scheduled_updates_idempotency ON scheduled_updates (app_id, idempotency_scope, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
