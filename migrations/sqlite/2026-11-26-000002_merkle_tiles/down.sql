DROP TABLE merkle_tiles;
