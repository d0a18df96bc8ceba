//! Game engines: pure functions of (plan, state, input) with no I/O, no clock and no randomness
//! inside. Time and random draws come in as inputs; the round lifecycle (`crate::round`)
//! records every input in the audit log, so replaying the log reproduces every result.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub mod baccarat;
pub mod blackjack;
pub mod casino_holdem;
pub mod oko_bere;
pub mod poker_hand;
pub mod poker_room;
pub mod roulette;
pub mod top_card;

pub use crate::wire_name;

/// Why a bet or an event was refused: a stable machine code, a message for a person, and the
/// clause of the plan whose rule refused it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    pub code: String,
    pub message: String,
    /// The plan (`id@version`) whose rule refused, where a plan's rule did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clause: Option<String>,
}

impl Refusal {
    pub fn new(code: &str, message: impl Into<String>) -> Refusal {
        Refusal {
            code: code.to_string(),
            message: message.into(),
            plan: None,
            clause: None,
        }
    }

    /// Names the plan whose rule refused (kept if already named).
    pub fn with_plan(mut self, plan: &str) -> Refusal {
        self.plan.get_or_insert_with(|| plan.to_string());
        self
    }

    pub fn clause(mut self, clause: impl Into<String>) -> Refusal {
        self.clause = Some(clause.into());
        self
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

/// What one bet (or one component of a combined bet) pays back. All amounts in minor units.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema, JsonSchema)]
pub struct Payout {
    /// The stake that was at risk.
    pub stake_minor: i64,
    /// The part of the stake returned (the whole stake on a win or a push, half on Top Card's
    /// tie, none on a loss).
    pub returned_minor: i64,
    /// Winnings on top of the returned stake.
    pub win_minor: i64,
    /// The outcome class from the plan's payout table (`win`, `tie`, …) or `lose`.
    pub outcome: String,
}

impl Payout {
    pub fn lose(stake_minor: i64) -> Payout {
        Payout {
            stake_minor,
            returned_minor: 0,
            win_minor: 0,
            outcome: "lose".into(),
        }
    }

    /// What the wallet is credited: returned stake plus winnings.
    pub fn total_minor(&self) -> i64 {
        self.returned_minor + self.win_minor
    }
}

/// Refusal codes every engine shares (each engine's own `code` module re-exports them).
pub mod code {
    /// The plan is not of the engine's family.
    pub const WRONG_FAMILY: &str = "wrong_family";
    /// A side bet without the bet it needs (the plan's `requires`) from the same player.
    pub const REQUIRES_MAIN_BET: &str = "requires_main_bet";
    /// Settlement: the plan has no usable payout row for the bet's outcome.
    pub const NO_PAYOUT_ROW: &str = "no_payout_row";
    /// Settlement: a win that does not fit in i64 minor units.
    pub const PAYOUT_OVERFLOW: &str = "payout_overflow";
    /// Settlement: a win above the bet type's `max_win` (or stake + win above
    /// `max_win_plus_stake`). A compliance failure: the round must not be paid as computed.
    pub const MAX_WIN_EXCEEDED: &str = "max_win_exceeded";
}

/// Pays `stake_minor` by one row of the plan's payout table — a ratio: the stake back plus
/// stake × ratio; a refund: that share of the stake back — with the plan's rounding, and holds
/// the result to the bet type's maximum win. The one place where every engine turns a payout
/// row into money: a win above `max_win` or `max_win_plus_stake` is an error, never capped.
/// `what` names the bet in messages (e.g. "split on 17-20").
pub fn pay_row(
    plan: &crate::plan::Plan,
    bet: &crate::plan::model::BetType,
    row: &crate::plan::model::Payout,
    stake_minor: i64,
    what: &str,
) -> Result<Payout, Refusal> {
    let (returned_minor, win_minor) = pay_row_amounts(plan, bet, row, stake_minor, what)?;
    Ok(Payout {
        stake_minor,
        returned_minor,
        win_minor,
        outcome: row.outcome.clone(),
    })
}

/// [`pay_row`] without the outcome name: `(returned_minor, win_minor)`, with the same rounding,
/// the same maximum-win check and the same refusals. For engines that settle many bets from
/// amounts computed once (simulation), where a `String` per payout would cost more than the
/// payout itself.
pub fn pay_row_amounts(
    plan: &crate::plan::Plan,
    bet: &crate::plan::model::BetType,
    row: &crate::plan::model::Payout,
    stake_minor: i64,
    what: &str,
) -> Result<(i64, i64), Refusal> {
    let money = |minor: i64| {
        format!(
            "{} {}",
            crate::money::format_minor(minor, plan.plan.currency.exponent()),
            plan.plan.currency
        )
    };
    let rounding = plan.plan.rounding;
    let overflow = || {
        Refusal::new(
            code::PAYOUT_OVERFLOW,
            format!(
                "{} on {what} by {} does not fit in 64-bit minor units",
                money(stake_minor),
                row.outcome
            ),
        )
        .clause(row.clause.clone())
    };
    let (returned_minor, win_minor) = match (row.ratio, row.refund) {
        (Some(ratio), _) => (
            stake_minor,
            ratio.apply(stake_minor, rounding).ok_or_else(overflow)?,
        ),
        (None, Some(refund)) => (refund.apply(stake_minor, rounding).ok_or_else(overflow)?, 0),
        (None, None) => {
            return Err(Refusal::new(
                code::NO_PAYOUT_ROW,
                format!(
                    "{}/{} has neither a ratio nor a refund",
                    row.bet, row.outcome
                ),
            )
            .clause(row.clause.clone()))
        }
    };
    let total_minor = returned_minor.checked_add(win_minor).ok_or_else(overflow)?;
    if win_minor > bet.max_win || total_minor > bet.max_win_plus_stake {
        return Err(Refusal::new(
            code::MAX_WIN_EXCEEDED,
            format!(
                "{what} wins {} ({} with the stake) by {}; {} allows at most {} ({} with the stake)",
                money(win_minor),
                money(total_minor),
                row.outcome,
                plan.key(),
                money(bet.max_win),
                money(bet.max_win_plus_stake)
            ),
        )
        .with_plan(&plan.key())
        .clause(bet.clause.clone()));
    }
    Ok((returned_minor, win_minor))
}

/// Refuses a plan whose rules, or whose heading, are not of `family` (`name` is the family as
/// a reader writes it, e.g. "Top Card"). Every engine's constructor starts with it.
pub fn expect_family(
    plan: &crate::plan::Plan,
    family: crate::plan::rules::Family,
    name: &str,
) -> Result<(), Refusal> {
    if plan.rules.family() != family {
        return Err(Refusal::new(
            code::WRONG_FAMILY,
            format!(
                "{} is a {} plan, not a {name} plan",
                plan.key(),
                plan.rules.family()
            ),
        ));
    }
    if plan.plan.family != family {
        return Err(Refusal::new(
            code::WRONG_FAMILY,
            format!(
                "{} is headed as a {} plan but has {name} rules",
                plan.key(),
                plan.plan.family
            ),
        ));
    }
    Ok(())
}

/// Refuses a bet of type `bet` when the plan says it `requires` another bet type and none of
/// `player_bet_types` (the same player's bet types in the round, this request included) is one.
pub fn check_requires<'a>(
    bet: &crate::plan::model::BetType,
    player_bet_types: impl IntoIterator<Item = &'a str>,
) -> Result<(), Refusal> {
    if bet.requires.is_empty()
        || player_bet_types
            .into_iter()
            .any(|t| bet.requires.iter().any(|r| r == t))
    {
        return Ok(());
    }
    Err(Refusal::new(
        code::REQUIRES_MAIN_BET,
        format!(
            "{} ({}) needs a bet on {} by the same player in the round",
            bet.id,
            bet.label,
            bet.requires.join(" or ")
        ),
    )
    .clause(bet.clause.clone()))
}

/// Earlier placements as the engines' round checks borrow them (`&[&Placement]`), for tests
/// that hold them by value.
#[cfg(test)]
pub(crate) fn refs<T>(v: &[T]) -> Vec<&T> {
    v.iter().collect()
}
