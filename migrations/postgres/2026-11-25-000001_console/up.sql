-- The console's returns to player: one report (JSON) per plan content and method
-- configuration, computed once in the background and read by the console.
CREATE TABLE console_rtp_reports (
    plan_sha256 TEXT NOT NULL,
    config      TEXT NOT NULL,
    plan        TEXT NOT NULL,
    computed_at TEXT NOT NULL,
    report      TEXT NOT NULL,
    PRIMARY KEY (plan_sha256, config)
);

-- The console lists entries by kind (plans loaded, significant events, the kind filter)
-- without reading the whole log.
CREATE INDEX audit_entries_kind ON audit_entries (kind, seq);
