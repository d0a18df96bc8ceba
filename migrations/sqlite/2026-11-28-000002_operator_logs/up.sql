-- A log per operator (issue 17, `serve --log-per-operator`): the operators whose log has
-- been made, so a start opens every one of them. Each log lives in its own store namespace
-- (a PostgreSQL schema, or a SQLite file under `logs/`), named by `namespace`; its origin is
-- the service's origin followed by `/operator/<operator>`. Written in the service's store only.
CREATE TABLE operator_logs (
    operator TEXT PRIMARY KEY NOT NULL,
    namespace TEXT NOT NULL UNIQUE,
    origin TEXT NOT NULL,
    created_at TEXT NOT NULL
);
