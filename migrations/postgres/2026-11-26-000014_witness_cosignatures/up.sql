-- Witnesses' cosignatures of the log's checkpoints (C2SP tlog-cosignature), one row per
-- (checkpoint size, witness): the signature line, appended to the checkpoint's note wherever it
-- is served (GET /v1/audit/checkpoint, proofs, exports). Written by the service's witness
-- threads, never by the writer's batches.
CREATE TABLE checkpoint_cosignatures (
    tree_size   BIGINT NOT NULL,
    witness     TEXT   NOT NULL,
    line        TEXT   NOT NULL,
    cosigned_at BIGINT NOT NULL,
    PRIMARY KEY (tree_size, witness)
);
CREATE INDEX checkpoint_cosignatures_witness ON checkpoint_cosignatures (witness, tree_size);
