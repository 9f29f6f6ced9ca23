-- The exact payload bytes an update sends (validated and measured when accepted), so the dispatcher sends what
-- was checked, byte for byte. NULL for starts, whose payload differs per audience (input-push-token/-channel).
ALTER TABLE updates ADD COLUMN payload text;
