-- Servers keep the keys that authenticated in memory, so that a request does not look its key up again. Whatever
-- changes or removes a key (a revocation through the API or the CLI, a deleted app, an edit by hand) tells them on
-- commit, through NOTIFY on livecast_api_keys with the key's prefix, and they forget it at once.
CREATE FUNCTION notify_api_key_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('livecast_api_keys', OLD.prefix);
    RETURN NULL;
END
$$;

CREATE TRIGGER api_keys_changed AFTER UPDATE OR DELETE ON api_keys
    FOR EACH ROW EXECUTE FUNCTION notify_api_key_change();

-- A changed bundle id changes what a cached key's caller says; a deleted app deletes its keys (the trigger above).
CREATE FUNCTION notify_app_keys_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('livecast_api_keys', '*');
    RETURN NULL;
END
$$;

CREATE TRIGGER apps_renamed AFTER UPDATE OF bundle_id ON apps
    FOR EACH ROW WHEN (OLD.bundle_id IS DISTINCT FROM NEW.bundle_id) EXECUTE FUNCTION notify_app_keys_change();
