-- A settled or voided round leaves the service's memory once its answers are durable; its
-- final state (exactly the JSON `GET /v1/rounds/{round}` answered) is kept here, written in
-- the transaction of the batch that finished it. Derived data: the log stays the source.
CREATE TABLE finished_rounds (
    round_id    TEXT NOT NULL PRIMARY KEY,
    table_id    TEXT NOT NULL,
    operator_id TEXT NOT NULL,
    body        TEXT NOT NULL
);
CREATE INDEX finished_rounds_table ON finished_rounds (table_id);
