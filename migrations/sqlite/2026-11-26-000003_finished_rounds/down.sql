DROP TABLE finished_rounds;
