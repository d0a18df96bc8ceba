//! Game families: each family's rule parameters and its vocabulary of bet types and outcome
//! classes. An engine for a family reads exactly these parameters; nothing that the documents
//! let vary between studios is hard-coded in an engine.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub mod baccarat;
pub mod blackjack;
pub mod casino_holdem;
pub mod oko_bere;
pub mod poker;
pub mod roulette;
pub mod top_card;

/// A game family: one engine each.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    Roulette,
    Blackjack,
    Baccarat,
    TopCard,
    CasinoHoldem,
    OkoBere,
    PokerCash,
}

impl Family {
    pub const ALL: [Family; 7] = [
        Family::Roulette,
        Family::Blackjack,
        Family::Baccarat,
        Family::TopCard,
        Family::CasinoHoldem,
        Family::OkoBere,
        Family::PokerCash,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Family::Roulette => "roulette",
            Family::Blackjack => "blackjack",
            Family::Baccarat => "baccarat",
            Family::TopCard => "top_card",
            Family::CasinoHoldem => "casino_holdem",
            Family::OkoBere => "oko_bere",
            Family::PokerCash => "poker_cash",
        }
    }

    /// Whether players bet against the house (limits and payout tables), as opposed to
    /// against each other (Oko bere's bank, poker pots).
    pub fn house_banked(self) -> bool {
        !matches!(self, Family::OkoBere | Family::PokerCash)
    }

    /// The bet types an engine of this family knows, with their outcome classes.
    pub fn bet_specs(self) -> &'static [BetSpec] {
        match self {
            Family::Roulette => roulette::BETS,
            Family::Blackjack => blackjack::BETS,
            Family::Baccarat => baccarat::BETS,
            Family::TopCard => top_card::BETS,
            Family::CasinoHoldem => casino_holdem::BETS,
            Family::OkoBere | Family::PokerCash => &[],
        }
    }

    pub fn bet_spec(self, id: &str) -> Option<&'static BetSpec> {
        self.bet_specs().iter().find(|s| s.id == id)
    }
}

impl std::fmt::Display for Family {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One bet type of a family's vocabulary.
#[derive(Debug)]
pub struct BetSpec {
    pub id: &'static str,
    /// What the bet is on, in one line, for the reviewers' README and `plan show`.
    pub summary: &'static str,
    /// The outcome classes a payout row of this bet type may name.
    pub outcomes: &'static [&'static str],
}

/// The game's parameters, one table per family: `[rules.roulette]`, `[rules.blackjack]`, …
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum GameRules {
    Roulette(roulette::RouletteRules),
    /// Boxed: blackjack has by far the most parameters of any family.
    Blackjack(Box<blackjack::BlackjackRules>),
    Baccarat(baccarat::BaccaratRules),
    TopCard(top_card::TopCardRules),
    CasinoHoldem(casino_holdem::CasinoHoldemRules),
    OkoBere(oko_bere::OkoBereRules),
    PokerCash(poker::PokerCashRules),
}

impl GameRules {
    pub fn family(&self) -> Family {
        match self {
            GameRules::Roulette(_) => Family::Roulette,
            GameRules::Blackjack(_) => Family::Blackjack,
            GameRules::Baccarat(_) => Family::Baccarat,
            GameRules::TopCard(_) => Family::TopCard,
            GameRules::CasinoHoldem(_) => Family::CasinoHoldem,
            GameRules::OkoBere(_) => Family::OkoBere,
            GameRules::PokerCash(_) => Family::PokerCash,
        }
    }

    /// Family-specific consistency checks: each returns (field path, problem).
    pub fn lint(&self) -> Vec<(String, String)> {
        match self {
            GameRules::Roulette(r) => r.lint(),
            GameRules::Blackjack(r) => r.lint(),
            GameRules::Baccarat(r) => r.lint(),
            GameRules::TopCard(r) => r.lint(),
            GameRules::CasinoHoldem(r) => r.lint(),
            GameRules::OkoBere(r) => r.lint(),
            GameRules::PokerCash(r) => r.lint(),
        }
    }

    /// Checks of the rules against the rest of the plan (its bet types and payout rows): a
    /// side bet offered in `[[bets]]` must be described in the rules and the other way round.
    /// Families without such checks return nothing.
    pub fn lint_against_plan(&self, plan: &crate::plan::model::Plan) -> Vec<(String, String)> {
        match self {
            GameRules::Blackjack(r) => r.lint_plan(plan),
            GameRules::Baccarat(r) => r.lint_against_plan(plan),
            GameRules::TopCard(r) => r.lint_against_plan(plan),
            GameRules::CasinoHoldem(r) => r.lint_against_plan(plan),
            _ => Vec::new(),
        }
    }
}
