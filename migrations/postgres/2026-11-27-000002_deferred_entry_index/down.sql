CREATE INDEX audit_entries_round ON audit_entries (round_id, seq);
CREATE INDEX audit_entries_table ON audit_entries (table_id, seq);
DROP TABLE audit_index_state;
DROP TABLE audit_table_entries;
DROP TABLE audit_round_entries;
