-- The operator console's sign-ins: the browser holds a random session token; only its SHA-256 is kept here, with the
-- API key it was opened with (never the key itself). A session ends at sign-out, at its expiry, or as soon as its key
-- is revoked (the lookup joins the key).
CREATE TABLE console_sessions (
    token_hash bytea PRIMARY KEY CHECK (length(token_hash) = 32),
    key_id bigint NOT NULL REFERENCES api_keys ON DELETE CASCADE,
    -- The token every state-changing form of the session carries (CSRF).
    csrf_token text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
-- Pruning expired sessions.
CREATE INDEX console_sessions_expiry ON console_sessions (expires_at);

-- The reaper's last pass over each app, for the console's overview.
ALTER TABLE apps ADD COLUMN reaped_at timestamptz;
ALTER TABLE apps ADD COLUMN reap_summary text;
