-- Entries by round and by table, written in bulk rather than with every batch: the two
-- secondary indexes of audit_entries put each batch's rows on as many leaf pages as it has
-- tables (each page written whole to the WAL), about a fifth of a batch's cost. The committer
-- now adds the pairs of every entry from `indexed_to` on every few hundred entries (or once a
-- second), in the transaction of a batch; readers look entries below `indexed_to` up here and
-- scan the short tail above it by seq. Derived data: the log (audit_entries) stays the source.
CREATE TABLE audit_round_entries (
    round_id TEXT   NOT NULL,
    seq      BIGINT NOT NULL,
    PRIMARY KEY (round_id, seq)
);
CREATE TABLE audit_table_entries (
    table_id TEXT   NOT NULL,
    seq      BIGINT NOT NULL,
    PRIMARY KEY (table_id, seq)
);
-- Every entry with seq below `indexed_to` is in both tables above (if it names a round, a table).
CREATE TABLE audit_index_state (
    id         INTEGER PRIMARY KEY NOT NULL,
    indexed_to BIGINT  NOT NULL
);
INSERT INTO audit_round_entries (round_id, seq)
    SELECT round_id, seq FROM audit_entries WHERE round_id IS NOT NULL;
INSERT INTO audit_table_entries (table_id, seq)
    SELECT table_id, seq FROM audit_entries WHERE table_id IS NOT NULL;
INSERT INTO audit_index_state (id, indexed_to)
    SELECT 1, COALESCE(MAX(seq) + 1, 0) FROM audit_entries;
DROP INDEX audit_entries_round;
DROP INDEX audit_entries_table;
