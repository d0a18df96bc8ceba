-- Key lifecycle: a key may expire, be revoked, be replaced by a rotation; the time it was last
-- used is kept (written at most once a minute per key). Every change is also a log entry.
ALTER TABLE api_keys ADD COLUMN expires_at TEXT;
ALTER TABLE api_keys ADD COLUMN revoked_at TEXT;
ALTER TABLE api_keys ADD COLUMN replaced_by TEXT;
ALTER TABLE api_keys ADD COLUMN last_used_at TEXT;
