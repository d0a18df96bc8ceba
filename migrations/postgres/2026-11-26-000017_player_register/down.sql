DROP TABLE player_usage;
DROP TABLE player_register;
