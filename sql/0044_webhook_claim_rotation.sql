-- Webhook claims rotate (#66): when each endpoint was last claimed, so that the app served least recently, then its
-- endpoint claimed least recently, goes first, and a busy old endpoint no longer wins every claim.
ALTER TABLE webhook_endpoints ADD COLUMN last_claimed_at timestamptz;
