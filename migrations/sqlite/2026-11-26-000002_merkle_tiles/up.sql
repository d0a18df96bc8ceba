-- The Merkle tree's hashes as 256-wide tiles (the C2SP tlog-tiles layout): a tile of level L
-- and index N holds the hashes of the level-8L nodes 256N … 256N+255 (level 0: leaf hashes);
-- the rightmost tile of a level is partial and grows. Proofs read O(log n) tiles; nothing of
-- the tree but its right edge is kept in memory.
CREATE TABLE merkle_tiles (
    level  INTEGER NOT NULL,
    idx    BIGINT  NOT NULL,
    hashes BLOB    NOT NULL,
    PRIMARY KEY (level, idx)
) WITHOUT ROWID;
