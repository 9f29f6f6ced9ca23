-- Dispatchers LISTEN on livecast_outbox to learn of new work at once. The outbox tells them itself: a statement that
-- adds updates notifies when its transaction commits (PostgreSQL folds a transaction's identical notifications into
-- one), which saves the accepting transaction a round trip of its own.
CREATE FUNCTION notify_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('livecast_outbox', '');
    RETURN NULL;
END
$$;

CREATE TRIGGER updates_added AFTER INSERT ON updates FOR EACH STATEMENT EXECUTE FUNCTION notify_outbox();
