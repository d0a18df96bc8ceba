-- The player usage in one row a player (002 § 6(3)): the current day's and month's amounts and
-- the open stakes, where it was a row a player and period. A batch of bets now changes one
-- row a player, not three in three places of the table; a player's row is read in one lookup.
-- Earlier days and months are not kept here (nothing read them; the log holds every stake,
-- settlement and report). `day_period` is the day `YYYYMMDD`, `month_period` the month
-- `YYYYMM`, of Europe/Prague local time, 0 for none yet; amounts of a period the row no
-- longer holds count as zero. `open_staked_minor`: the stakes of rounds not settled yet.
CREATE TABLE player_usage_by_player (
    operator_id                    TEXT NOT NULL,
    player                         TEXT NOT NULL,
    day_period                     BIGINT NOT NULL,
    day_staked_minor               BIGINT NOT NULL,
    day_net_loss_minor             BIGINT NOT NULL,
    day_reported_staked_minor      BIGINT NOT NULL,
    day_reported_net_loss_minor    BIGINT NOT NULL,
    month_period                   BIGINT NOT NULL,
    month_staked_minor             BIGINT NOT NULL,
    month_net_loss_minor           BIGINT NOT NULL,
    month_reported_staked_minor    BIGINT NOT NULL,
    month_reported_net_loss_minor  BIGINT NOT NULL,
    open_staked_minor              BIGINT NOT NULL,
    PRIMARY KEY (operator_id, player)
);
-- Each player's latest day and month (and open stakes) as they were.
INSERT INTO player_usage_by_player
SELECT p.operator_id, p.player,
       COALESCE(CAST(REPLACE(d.period, '-', '') AS BIGINT), 0),
       COALESCE(d.staked_minor, 0), COALESCE(d.net_loss_minor, 0),
       COALESCE(d.reported_staked_minor, 0), COALESCE(d.reported_net_loss_minor, 0),
       COALESCE(CAST(REPLACE(m.period, '-', '') AS BIGINT), 0),
       COALESCE(m.staked_minor, 0), COALESCE(m.net_loss_minor, 0),
       COALESCE(m.reported_staked_minor, 0), COALESCE(m.reported_net_loss_minor, 0),
       COALESCE(o.staked_minor, 0)
FROM (SELECT DISTINCT operator_id, player FROM player_usage) p
LEFT JOIN player_usage d ON d.operator_id = p.operator_id AND d.player = p.player
    AND d.period = (SELECT MAX(x.period) FROM player_usage x WHERE x.operator_id = p.operator_id
                    AND x.player = p.player AND LENGTH(x.period) = 10)
LEFT JOIN player_usage m ON m.operator_id = p.operator_id AND m.player = p.player
    AND m.period = (SELECT MAX(x.period) FROM player_usage x WHERE x.operator_id = p.operator_id
                    AND x.player = p.player AND LENGTH(x.period) = 7)
LEFT JOIN player_usage o ON o.operator_id = p.operator_id AND o.player = p.player
    AND o.period = 'open';
DROP TABLE player_usage;
