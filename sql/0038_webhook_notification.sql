-- New webhook deliveries wake the webhook workers: the trigger that turns events into deliveries also sends
-- NOTIFY livecast_webhooks when it wrote any (the workers LISTEN, and poll only as a fallback). No delivery written,
-- no notification: an app without endpoints adds nothing to its transactions' commit.
CREATE OR REPLACE FUNCTION events_enqueue_deliveries() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    written bigint;
BEGIN
    INSERT INTO webhook_deliveries (endpoint_id, event_id)
    SELECT w.id, e.id FROM new_events e
    JOIN webhook_endpoints w ON w.app_id = e.app_id AND w.enabled
        AND (cardinality(w.event_types) = 0 OR e.type = ANY(w.event_types))
    ORDER BY e.id;
    GET DIAGNOSTICS written = ROW_COUNT;
    IF written > 0 THEN
        PERFORM pg_notify('livecast_webhooks', '');
    END IF;
    RETURN NULL;
END
$$;
