-- The audit log: append-only. Nothing updates or deletes an entry.
-- `INTEGER PRIMARY KEY` makes seq SQLite's rowid (64-bit): one B-tree fewer per entry.
CREATE TABLE audit_entries (
    seq         INTEGER PRIMARY KEY NOT NULL,
    ts          TEXT NOT NULL,
    kind        TEXT NOT NULL,
    operator_id TEXT,
    table_id    TEXT,
    round_id    TEXT,
    bet_id      TEXT,
    canonical   BLOB NOT NULL,
    leaf_hash   BLOB NOT NULL
);
CREATE INDEX audit_entries_round ON audit_entries (round_id, seq);
CREATE INDEX audit_entries_table ON audit_entries (table_id, seq);

-- The log's chain head and Merkle frontier, rewritten in the same transaction as each batch.
CREATE TABLE log_state (
    id    INTEGER PRIMARY KEY NOT NULL,
    state TEXT NOT NULL
);

CREATE TABLE checkpoints (
    tree_size  BIGINT PRIMARY KEY NOT NULL,
    note       TEXT NOT NULL,
    created_at TEXT NOT NULL
);

-- A retried request returns the stored first answer.
CREATE TABLE idempotency (
    operator_id  TEXT NOT NULL,
    idem_key     TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    status       INTEGER NOT NULL,
    body         TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (operator_id, idem_key)
) WITHOUT ROWID;

CREATE TABLE api_keys (
    key_id      TEXT PRIMARY KEY NOT NULL,
    secret_hash TEXT NOT NULL,
    role        TEXT NOT NULL,
    operator_id TEXT,
    created_at  TEXT NOT NULL
);

-- RNG seeds stay secret until the round is settled; the log holds their SHA-256 from the start.
CREATE TABLE rng_seeds (
    round_id TEXT PRIMARY KEY NOT NULL,
    seed     BLOB NOT NULL
);
