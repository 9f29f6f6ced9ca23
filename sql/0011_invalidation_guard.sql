-- The invalidation guard: when one batch of an app's pushes comes back mostly Unregistered or BadDeviceToken (a wrong
-- environment or key, not users uninstalling), its tokens are not invalidated and the app's sending is held until
-- an operator resumes it (livecast apps resume, POST /v1/apps/{bundleId}/sending:resume). NULL: sending.
ALTER TABLE apps ADD COLUMN sending_held_at timestamptz;
ALTER TABLE apps ADD COLUMN sending_held_reason text;
