DROP TABLE closed_tables;
DROP TABLE state_snapshots;
