-- The reaper (livecast reap, and the periodic job in serve): a stale grace per feed, retention periods per app,
-- and when an activity was dismissed. NULL everywhere means "the reaper's global setting".

-- Seconds after a feed's stale-date before the reaper ends it; NULL: --stale-grace.
ALTER TABLE feeds ADD COLUMN stale_grace_seconds integer CHECK (stale_grace_seconds >= 0);

-- Days finished updates (sent, superseded, failed), deliveries and dismissed activities are kept; NULL: the
-- reaper's defaults (7, 7 and 30 days).
ALTER TABLE apps ADD COLUMN retain_updates_days integer CHECK (retain_updates_days > 0);
ALTER TABLE apps ADD COLUMN retain_deliveries_days integer CHECK (retain_deliveries_days > 0);
ALTER TABLE apps ADD COLUMN retain_dismissed_activities_days integer CHECK (retain_dismissed_activities_days > 0);

-- When the reaper dismissed the activity (its dismissal date had passed): the retention clock of dismissed rows.
ALTER TABLE activities ADD COLUMN dismissed_at timestamptz;

-- The reaper's scans: running activities by age, ended ones to dismiss, dismissed ones to prune.
CREATE INDEX activities_running_started ON activities (app_id, started_at) WHERE state IN ('starting', 'active');
CREATE INDEX activities_ended ON activities (app_id, id) WHERE state = 'ended';
CREATE INDEX activities_dismissed ON activities (app_id, dismissed_at) WHERE state = 'dismissed';
-- Finished updates to prune, and deliveries by age.
CREATE INDEX updates_finished ON updates (app_id, completed_at) WHERE status IN ('sent', 'superseded', 'failed');
CREATE INDEX deliveries_attempted ON deliveries (attempted_at);
-- Live push-to-start tokens not seen for a while.
CREATE INDEX push_to_start_tokens_last_seen ON push_to_start_tokens (app_id, last_seen_at) WHERE invalidated_at IS NULL;
