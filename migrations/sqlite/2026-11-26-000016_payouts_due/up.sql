-- 002 § 9(1): winnings are paid "nejpozději do 30 dnů ode dne jejího vyhodnocení". What each
-- settlement owes each player (the sum of the player's `total_minor`, when above zero), with
-- the evaluation time (the settling batch's) and the due time; the operator's confirmation of
-- payment (its wallet reference) is logged (`payout_confirmed`) and recorded here. Derived
-- data, written in the transaction of the batch that settled or confirmed.
CREATE TABLE payouts_due (
    round_id         TEXT NOT NULL,
    player           TEXT NOT NULL,
    operator_id      TEXT NOT NULL,
    amount_minor     BIGINT NOT NULL,
    evaluated_at     TEXT NOT NULL,
    due_at           TEXT NOT NULL,
    paid_at          TEXT,
    wallet_reference TEXT,
    PRIMARY KEY (round_id, player)
);
CREATE INDEX payouts_due_open ON payouts_due (operator_id, due_at);
