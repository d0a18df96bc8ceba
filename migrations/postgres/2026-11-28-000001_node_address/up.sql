-- Several nodes on one database (issue 17): the node that holds the lease says where the
-- others reach it (`serve --node-url`), so a standby forwards requests to it.
ALTER TABLE writer_lease ADD COLUMN address TEXT;
