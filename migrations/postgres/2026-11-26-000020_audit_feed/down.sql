DROP INDEX audit_entries_ts;
DROP TABLE audit_entry_tags_state;
DROP TABLE audit_entry_tags;
