-- 002 § 6(2), (3): the player register of each operator. Derived data, written in the
-- transaction of the batch that logged the change (`player_excluded`,
-- `player_exclusion_lifted`, `player_limits_set`, `player_usage_reported`) or counted the
-- stakes and losses (bets accepted, rounds settled or voided, stakes refunded); read per batch
-- for the players it concerns, never held in memory.
-- `body`: the player's exclusion and self-limits (JSON, `crate::service::register::Entry`).
CREATE TABLE player_register (
    operator_id TEXT NOT NULL,
    player      TEXT NOT NULL,
    body        TEXT NOT NULL,
    PRIMARY KEY (operator_id, player)
);
-- What pitboss counted, and what the operator reported the player used elsewhere, per period:
-- `period` is a day `YYYY-MM-DD` or a month `YYYY-MM` of Europe/Prague local time, or `open`
-- (the stakes of rounds not settled yet, in `staked_minor`).
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
