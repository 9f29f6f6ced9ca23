-- Tokens only a client key vouches for never hold an app (#66 §1). The invalidation guard judges proven tokens only
-- (0033), before and after the app's credentials are proven. An unproven token APNs refuses before any push of the
-- app was accepted under its current credentials may be a stranger's invention or a real phone under a wrong
-- environment or key: it is neither invalidated nor sent to again, and its push waits, owed, for that proof.

-- An owed push whose unproven token APNs refused while the app's credentials were unproven: never due (not_before is
-- 'infinity') until APNs accepts a push of the app, its signing key changes, or an admin resumes it; then it is due at
-- once and sent again, when a refusal invalidates the token.
ALTER TABLE owed_pushes ADD COLUMN awaits_proof boolean NOT NULL DEFAULT false;
CREATE INDEX owed_pushes_awaiting_proof ON owed_pushes (app_id) WHERE awaits_proof;

-- Why the app's credentials are in doubt: APNs refused a batch of unproven tokens and has accepted no push since the
-- signing key was set. Shown with the app until the proof (or a resume) clears it; it never holds the app.
ALTER TABLE apps ADD COLUMN credentials_doubt text;
ALTER TABLE apps ADD COLUMN credentials_doubt_at timestamptz;
