DROP TABLE writer_lease;
