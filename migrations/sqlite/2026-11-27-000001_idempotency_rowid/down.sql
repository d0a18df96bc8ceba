CREATE TABLE idempotency_old (
    operator_id  TEXT NOT NULL,
    idem_key     TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    status       INTEGER NOT NULL,
    body         TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (operator_id, idem_key)
) WITHOUT ROWID;
INSERT INTO idempotency_old SELECT operator_id, idem_key, request_hash, status, body, created_at
    FROM idempotency;
DROP TABLE idempotency;
ALTER TABLE idempotency_old RENAME TO idempotency;
CREATE INDEX idempotency_created_at ON idempotency (created_at);
