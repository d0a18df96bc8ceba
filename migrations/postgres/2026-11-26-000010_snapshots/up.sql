-- The live state (open tables, open rounds) as of a log size, so a start replays only the
-- log's tail. The body's SHA-256 is also logged (a `state_snapshot` entry at seq = covers), so
-- an auditor checks it against a full replay. Derived data: the log stays the source.
CREATE TABLE state_snapshots (
    covers     BIGINT NOT NULL PRIMARY KEY,
    sha256     TEXT NOT NULL,
    body       BYTEA NOT NULL,
    created_at TEXT NOT NULL
);
-- A closed table leaves the service's memory once its close is durable; its final state
-- (exactly the JSON `GET /v1/tables/{table}` answered) is kept here. Table ids stay unique:
-- opening a table checks this too.
CREATE TABLE closed_tables (
    table_id    TEXT NOT NULL PRIMARY KEY,
    operator_id TEXT NOT NULL,
    plan        TEXT NOT NULL,
    body        TEXT NOT NULL
);
