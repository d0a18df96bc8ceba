DROP INDEX audit_entries_kind; DROP TABLE console_rtp_reports;
