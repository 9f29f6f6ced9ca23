-- An accepted batch of activity updates spent the app's hourly priority-10 budget one update at a time: a
-- statement, and a round trip, for each update asking for priority 10. With every update at priority 10 (the
-- alerts of a sports app), the most updates a second Livecast accepted was under half of what it accepted at
-- priority 5. spend_priority_budget(app, wanted) spends up to `wanted` units of the app's budget for the current
-- hour in one call and answers how many it granted: all of them without a cap (apps.priority10_hourly_cap NULL),
-- otherwise what is left of the cap. The hour's row is made on first use and locked while it is counted, so that
-- concurrent spenders count one after another, as the upsert they replace did.
CREATE FUNCTION spend_priority_budget(p_app_id bigint, wanted integer) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    hourly_cap integer;
    spent integer;
    granted integer;
BEGIN
    IF wanted <= 0 THEN
        RETURN 0;
    END IF;
    SELECT priority10_hourly_cap INTO hourly_cap FROM apps WHERE id = p_app_id;
    INSERT INTO priority_budget (app_id, hour, used) VALUES (p_app_id, date_trunc('hour', now()), 0)
    ON CONFLICT (app_id, hour) DO NOTHING;
    SELECT used INTO spent FROM priority_budget
    WHERE app_id = p_app_id AND hour = date_trunc('hour', now())
    FOR UPDATE;
    granted := least(wanted, greatest(0, coalesce(hourly_cap - spent, wanted)));
    IF granted > 0 THEN
        UPDATE priority_budget SET used = used + granted WHERE app_id = p_app_id AND hour = date_trunc('hour', now());
    END IF;
    RETURN granted;
END
$$;
