DROP TABLE rng_seeds; DROP TABLE api_keys; DROP TABLE idempotency; DROP TABLE checkpoints; DROP TABLE log_state; DROP TABLE audit_entries;
