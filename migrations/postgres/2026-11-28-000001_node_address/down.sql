ALTER TABLE writer_lease DROP COLUMN address;
