-- The outbox's notification says what was added: 'feed' for feeds' updates (fan-outs), 'activity' for standalone
-- activities' (quick work), so a notification wakes only the dispatcher workers that take that kind. With every
-- worker woken by every notification, under a steady stream of activity updates the fan-out workers mostly ran
-- empty claims.
CREATE OR REPLACE FUNCTION notify_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM added WHERE feed_id IS NOT NULL) THEN
        PERFORM pg_notify('livecast_outbox', 'feed');
    END IF;
    IF EXISTS (SELECT 1 FROM added WHERE feed_id IS NULL) THEN
        PERFORM pg_notify('livecast_outbox', 'activity');
    END IF;
    RETURN NULL;
END
$$;

DROP TRIGGER updates_added ON updates;
CREATE TRIGGER updates_added AFTER INSERT ON updates REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION notify_outbox();
