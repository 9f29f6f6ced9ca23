-- A console session's live streams (#66): each holds a place under a lease renewed while it runs, so that one session
-- has at most a few open at once across every instance. A stream's place goes with its session (sign-out, pruning).
CREATE TABLE console_streams (
    id uuid PRIMARY KEY,
    token_hash bytea NOT NULL REFERENCES console_sessions ON DELETE CASCADE,
    lease_until timestamptz NOT NULL
);
CREATE INDEX console_streams_session ON console_streams (token_hash);

-- A scheduled send keeps the key that made it (#66), so that revoking the key says how many of its sends are still
-- to go and can cancel them. Sends scheduled before this migration have none.
ALTER TABLE scheduled_updates ADD COLUMN key_id bigint REFERENCES api_keys ON DELETE SET NULL;
CREATE INDEX scheduled_updates_key ON scheduled_updates (key_id) WHERE status = 'scheduled';
