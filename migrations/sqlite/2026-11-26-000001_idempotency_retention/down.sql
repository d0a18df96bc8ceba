DROP INDEX idempotency_created_at;
