CREATE TABLE player_usage (
    operator_id             TEXT NOT NULL,
    player                  TEXT NOT NULL,
    period                  TEXT NOT NULL,
    staked_minor            BIGINT NOT NULL,
    net_loss_minor          BIGINT NOT NULL,
    reported_staked_minor   BIGINT NOT NULL,
    reported_net_loss_minor BIGINT NOT NULL,
    PRIMARY KEY (operator_id, player, period)
);
INSERT INTO player_usage
SELECT operator_id, player,
       SUBSTR(CAST(day_period AS TEXT), 1, 4) || '-' || SUBSTR(CAST(day_period AS TEXT), 5, 2)
           || '-' || SUBSTR(CAST(day_period AS TEXT), 7, 2),
       day_staked_minor, day_net_loss_minor, day_reported_staked_minor, day_reported_net_loss_minor
FROM player_usage_by_player WHERE day_period > 0;
INSERT INTO player_usage
SELECT operator_id, player,
       SUBSTR(CAST(month_period AS TEXT), 1, 4) || '-' || SUBSTR(CAST(month_period AS TEXT), 5, 2),
       month_staked_minor, month_net_loss_minor, month_reported_staked_minor,
       month_reported_net_loss_minor
FROM player_usage_by_player WHERE month_period > 0;
INSERT INTO player_usage
SELECT operator_id, player, 'open', open_staked_minor, 0, 0, 0
FROM player_usage_by_player;
DROP TABLE player_usage_by_player;
