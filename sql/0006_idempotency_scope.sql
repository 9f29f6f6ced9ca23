-- Idempotency keys are scoped to the route and target they were sent to (the request's method and path), and the
-- fingerprint (SHA-256) of the first request's body is kept: the same key on another route or target is another
-- key, and the same key with another body is refused (422 idempotency_key_reused). Keys kept before this migration
-- have no scope and are no longer replayed.
ALTER TABLE updates
    ADD COLUMN idempotency_scope text,
    ADD COLUMN idempotency_fingerprint text;

DROP INDEX updates_idempotency;
CREATE UNIQUE INDEX updates_idempotency ON updates (app_id, idempotency_scope, idempotency_key) WHERE idempotency_key IS NOT NULL;
