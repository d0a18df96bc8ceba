-- The witness's own store (pitboss witness), a SQLite file on the regulator's machine.

-- The witness's name, fixed at its first start (it is part of its key id).
CREATE TABLE witness_meta (
    key TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);

-- Every checkpoint the witness cosigned, per log. The largest size of an origin is what the
-- next add-checkpoint must extend; the older rows make a fork at an old size provable.
CREATE TABLE witness_cosigned (
    origin TEXT NOT NULL,
    size BIGINT NOT NULL,
    root BLOB NOT NULL,
    -- The checkpoint note as submitted, with the witness's cosignature line appended.
    note TEXT NOT NULL,
    cosigned_at TEXT NOT NULL,
    PRIMARY KEY (origin, size)
);

-- Signed checkpoints the witness refused because they conflict with what it cosigned.
CREATE TABLE witness_evidence (
    id BIGINT PRIMARY KEY NOT NULL,
    origin TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    kind TEXT NOT NULL,
    detail TEXT NOT NULL,
    witnessed_size BIGINT,
    witnessed_note TEXT,
    submitted_old_size BIGINT NOT NULL,
    submitted_proof TEXT NOT NULL,
    submitted_note TEXT NOT NULL
);
CREATE INDEX witness_evidence_by_origin ON witness_evidence (origin, id);
