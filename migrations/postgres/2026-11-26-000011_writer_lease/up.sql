-- One writer per log. The node that writes holds this lease (renewed while it runs, and in every
-- batch's transaction, where the token is checked: a writer whose lease another node took over
-- can no longer commit). SQLite deployments lock a file beside the database instead.
CREATE TABLE writer_lease (
    id         INTEGER NOT NULL PRIMARY KEY,
    holder     TEXT NOT NULL,
    token      BIGINT NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
