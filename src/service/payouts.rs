//! Payout deadlines (002 § 9(1): "Provozovatel vyplátí výhru bez zbytečného odkladu, nejpozději
//! do 30 dnů ode dne jejího vyhodnocení"). Every settlement owes each player the sum of his
//! `total_minor` (when above zero), due 30 days after the evaluation (the settling batch's
//! time). The rows live in the store (`payouts_due`), written in the batch's transaction; the
//! operator's confirmation of a payment, with its wallet's reference, is logged
//! (`payout_confirmed`) and recorded in the same transaction. Nothing of it is kept in memory.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use diesel::prelude::*;
use serde::{Deserialize, Serialize};

use crate::games::Refusal;
use crate::round::Event;
use crate::store::schema::payouts_due;
use crate::store::{DbConnection, StoreError};

/// § 9(1): "nejpozději do 30 dnů ode dne jejího vyhodnocení".
pub const PAYOUT_DEADLINE_DAYS: i64 = 30;
/// The clause a refusal or a listing names.
pub const CLAUSE: &str = "002 § 9(1)";
/// Most rows one listing returns.
pub const MAX_LIST: i64 = 1_000;

/// The stable codes of this module's refusals.
pub mod code {
    /// No amount is owed to that player by that round (or it is another operator's).
    pub const PAYOUT_NOT_FOUND: &str = "payout_not_found";
    /// The payment was confirmed before.
    pub const PAYOUT_ALREADY_CONFIRMED: &str = "payout_already_confirmed";
    /// A wallet reference of 1–128 characters is required.
    pub const BAD_WALLET_REFERENCE: &str = "bad_wallet_reference";
}

/// What a settlement owes one player, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PayoutDue {
    pub round: String,
    pub player: String,
    /// The sum of the player's `total_minor` in the settlement.
    pub amount_minor: i64,
    /// When the round was evaluated (settled).
    pub evaluated_at: DateTime<Utc>,
    /// `evaluated_at` + 30 days (002 § 9(1)).
    pub due_at: DateTime<Utc>,
    /// When the operator confirmed the payment, if it did.
    #[schema(required = true)]
    pub paid_at: Option<DateTime<Utc>>,
    #[schema(required = true)]
    pub wallet_reference: Option<String>,
}

/// A row to write: `(operator, due)`.
pub type DueRow = (String, PayoutDue);

/// A payment confirmed: what was owed, when it was confirmed, the wallet's reference.
pub type Confirmed = (PayoutDue, DateTime<Utc>, String);

/// The amounts the settlements among `events` owe, evaluated at `now`.
pub fn due_of_events(events: &[Event], operator: &str, now: DateTime<Utc>) -> Vec<DueRow> {
    let mut out = Vec::new();
    for e in events {
        let Event::RoundSettled {
            round, settlements, ..
        } = e
        else {
            continue;
        };
        let operator = operator.to_string();
        let mut by_player: BTreeMap<&str, i64> = BTreeMap::new();
        for s in settlements {
            *by_player.entry(s.player.as_str()).or_default() += s.total_minor;
        }
        for (player, amount) in by_player.into_iter().filter(|(_, a)| *a > 0) {
            out.push((
                operator.clone(),
                PayoutDue {
                    round: round.clone(),
                    player: player.to_string(),
                    amount_minor: amount,
                    evaluated_at: now,
                    due_at: now + Duration::days(PAYOUT_DEADLINE_DAYS),
                    paid_at: None,
                    wallet_reference: None,
                },
            ));
        }
    }
    out
}

/// A time as stored (RFC 3339, microseconds, UTC).
pub(super) fn ts(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, true)
}

fn parse_ts(s: &str) -> Result<DateTime<Utc>, StoreError> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| StoreError::Corrupt(format!("payout time {s}: {e}")))
}

/// Writes new amounts due and confirmed payments (inside the batch's transaction).
pub fn write(
    c: &mut DbConnection,
    due: &[DueRow],
    confirmed: &[Confirmed],
) -> Result<(), diesel::result::Error> {
    for (operator, d) in due {
        diesel::insert_into(payouts_due::table)
            .values((
                payouts_due::round_id.eq(&d.round),
                payouts_due::player.eq(&d.player),
                payouts_due::operator_id.eq(operator),
                payouts_due::amount_minor.eq(d.amount_minor),
                payouts_due::evaluated_at.eq(ts(d.evaluated_at)),
                payouts_due::due_at.eq(ts(d.due_at)),
            ))
            .execute(c)?;
    }
    for (d, at, reference) in confirmed {
        diesel::update(
            payouts_due::table
                .filter(payouts_due::round_id.eq(&d.round))
                .filter(payouts_due::player.eq(&d.player)),
        )
        .set((
            payouts_due::paid_at.eq(Some(ts(*at))),
            payouts_due::wallet_reference.eq(Some(reference)),
        ))
        .execute(c)?;
    }
    Ok(())
}

type Row = (
    String,
    String,
    String,
    i64,
    String,
    String,
    Option<String>,
    Option<String>,
);

fn of_row(r: Row) -> Result<(String, PayoutDue), StoreError> {
    let (round, player, operator, amount, evaluated, due, paid, reference) = r;
    Ok((
        operator,
        PayoutDue {
            round,
            player,
            amount_minor: amount,
            evaluated_at: parse_ts(&evaluated)?,
            due_at: parse_ts(&due)?,
            paid_at: paid.as_deref().map(parse_ts).transpose()?,
            wallet_reference: reference,
        },
    ))
}

const COLUMNS: (
    payouts_due::round_id,
    payouts_due::player,
    payouts_due::operator_id,
    payouts_due::amount_minor,
    payouts_due::evaluated_at,
    payouts_due::due_at,
    payouts_due::paid_at,
    payouts_due::wallet_reference,
) = (
    payouts_due::round_id,
    payouts_due::player,
    payouts_due::operator_id,
    payouts_due::amount_minor,
    payouts_due::evaluated_at,
    payouts_due::due_at,
    payouts_due::paid_at,
    payouts_due::wallet_reference,
);

/// One round's amount owed to one player: `(operator, due)`.
pub fn find(
    c: &mut DbConnection,
    round: &str,
    player: &str,
) -> Result<Option<(String, PayoutDue)>, StoreError> {
    let row: Option<Row> = payouts_due::table
        .filter(payouts_due::round_id.eq(round))
        .filter(payouts_due::player.eq(player))
        .select(COLUMNS)
        .first(c)
        .optional()?;
    row.map(of_row).transpose()
}

/// Amounts not confirmed paid whose due time is before `as_of`, oldest first; of one operator
/// or (`None`) of all.
pub fn overdue(
    c: &mut DbConnection,
    operator: Option<&str>,
    as_of: DateTime<Utc>,
) -> Result<Vec<PayoutDue>, StoreError> {
    let mut q = payouts_due::table
        .filter(payouts_due::paid_at.is_null())
        .filter(payouts_due::due_at.lt(ts(as_of)))
        .select(COLUMNS)
        .order((payouts_due::due_at.asc(), payouts_due::round_id.asc()))
        .limit(MAX_LIST)
        .into_boxed();
    if let Some(op) = operator {
        q = q.filter(payouts_due::operator_id.eq(op.to_string()));
    }
    let rows: Vec<Row> = q.load(c)?;
    rows.into_iter()
        .map(|r| of_row(r).map(|(_, d)| d))
        .collect()
}

/// `(outstanding, overdue)`: amounts not confirmed paid, and those of them past due at `now`.
pub fn counts(c: &mut DbConnection, now: DateTime<Utc>) -> Result<(i64, i64), StoreError> {
    let outstanding: i64 = payouts_due::table
        .filter(payouts_due::paid_at.is_null())
        .count()
        .get_result(c)?;
    let overdue: i64 = payouts_due::table
        .filter(payouts_due::paid_at.is_null())
        .filter(payouts_due::due_at.lt(ts(now)))
        .count()
        .get_result(c)?;
    Ok((outstanding, overdue))
}

/// Decides a confirmation of payment against the stored row (`found`) and the confirmations
/// already made in this batch.
pub fn decide_confirm(
    operator: &str,
    round: &str,
    player: &str,
    wallet_reference: &str,
    found: Option<(String, PayoutDue)>,
    in_batch: &[Confirmed],
    now: DateTime<Utc>,
) -> Result<(Event, PayoutDue), Refusal> {
    if wallet_reference.trim().is_empty() || wallet_reference.chars().count() > 128 {
        return Err(Refusal::new(
            code::BAD_WALLET_REFERENCE,
            "a payment is confirmed with the wallet's reference (1–128 characters)",
        )
        .clause(CLAUSE));
    }
    let Some((owner, due)) = found.filter(|(o, _)| o == operator) else {
        return Err(Refusal::new(
            code::PAYOUT_NOT_FOUND,
            format!("round {round} owes player {player} nothing to pay"),
        ));
    };
    if due.paid_at.is_some()
        || in_batch
            .iter()
            .any(|(d, _, _)| d.round == round && d.player == player)
    {
        return Err(Refusal::new(
            code::PAYOUT_ALREADY_CONFIRMED,
            format!("the payment of round {round} to player {player} was confirmed before"),
        )
        .clause(CLAUSE));
    }
    debug_assert_eq!(owner, operator);
    let late = now > due.due_at;
    Ok((
        Event::PayoutConfirmed {
            round: round.to_string(),
            player: player.to_string(),
            amount_minor: due.amount_minor,
            wallet_reference: wallet_reference.to_string(),
            late,
        },
        due,
    ))
}
