//! Game engines: pure functions of (plan, state, input) with no I/O, no clock and no randomness
//! inside. Time and random draws come in as inputs; the round lifecycle (`crate::round`)
//! records every input in the audit log, so replaying the log reproduces every result.

use serde::{Deserialize, Serialize};

pub mod baccarat;
pub mod blackjack;
pub mod casino_holdem;
pub mod poker_hand;
pub mod roulette;
pub mod top_card;

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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
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
