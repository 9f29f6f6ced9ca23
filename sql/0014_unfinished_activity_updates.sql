-- A standalone activity's unfinished updates (pending or being sent), found without reading its history: the
-- dispatcher's claim asks, for each due update, whether an older one of its activity is unfinished, and accepting an
-- update supersedes the activity's pending ones. Through updates_activity (every update of the activity) both read
-- the whole history, so the update rate fell as activities aged (scripts/bench.sh --api's max-updates: 712/s, then
-- 562/s in the next 10 s; 909/s with this index).
CREATE INDEX updates_activity_unfinished ON updates (activity_id, id)
    WHERE status IN ('pending', 'dispatching') AND activity_id IS NOT NULL;
