DROP TABLE witness_evidence;
DROP TABLE witness_cosigned;
DROP TABLE witness_meta;
