-- Client keys (#47): a publishable role that an app embeds, which may only register its own device's push-to-start
-- tokens and activities (the device named by each request's Livecast-Device-ID header).
ALTER TABLE api_keys DROP CONSTRAINT api_keys_role_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_role_check CHECK (role IN ('client', 'backend', 'operator', 'admin'));

-- A device's running activities: counted against a client key's cap per device, and ended when the device is
-- unregistered. A device's live push-to-start tokens are push_to_start_tokens_live's (0001).
CREATE INDEX activities_device ON activities (app_id, device_id)
    WHERE state IN ('starting', 'active') AND device_id IS NOT NULL;
