-- Idempotency records are kept for a retention period (default 24 h) and pruned by age in
-- small batches; the audit log is never pruned.
CREATE INDEX idempotency_created_at ON idempotency (created_at);
