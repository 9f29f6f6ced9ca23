-- Console sessions end after an idle period (#56): when each was last used, touched at most once a minute.
ALTER TABLE console_sessions ADD COLUMN last_used_at timestamptz NOT NULL DEFAULT now();
