DROP TABLE payouts_due;
