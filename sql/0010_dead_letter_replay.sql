-- Dead letters can be replayed (POST …/dead-letters/{id}/replay): once, with what came of it. A replay puts the push
-- back in owed_pushes (or a fan-out given up as a whole back in the outbox) unless its target is gone or a newer
-- update has reached it since.
ALTER TABLE dead_letters ADD COLUMN replayed_at timestamptz;
ALTER TABLE dead_letters ADD COLUMN replay_outcome text CHECK (replay_outcome IN ('requeued', 'superseded', 'targetGone'));
-- The records look a push's dead letter up by its update.
CREATE INDEX dead_letters_update ON dead_letters (update_id);
