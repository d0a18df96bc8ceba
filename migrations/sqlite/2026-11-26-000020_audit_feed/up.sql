-- The audit-entry listing's filters (GET /v1/audit/entries) that the entries' columns do not
-- hold: the player a bet, refund or decision names, a refusal's code, and whether the entry is
-- a significant event for a supervisor's feed. One row per (tag, value, entry), written in the
-- transaction of the entry's batch; derived data, rebuilt from the log when missing.
CREATE TABLE audit_entry_tags (
    tag   TEXT   NOT NULL,
    value TEXT   NOT NULL,
    seq   BIGINT NOT NULL,
    PRIMARY KEY (tag, value, seq)
) WITHOUT ROWID;

-- Set once the tags of every entry before the service's start have been derived.
CREATE TABLE audit_entry_tags_state (
    id       INTEGER PRIMARY KEY NOT NULL,
    complete INTEGER NOT NULL
);

-- The listing's time range finds its first entry without reading the log from the start.
CREATE INDEX audit_entries_ts ON audit_entries (ts);
