//! Casino Hold'em against the dealer (Evolution; SYNOT with Call Blind, AA and Casino Razz).
//!
//! DRAFT vocabulary and parameters: the Casino Hold'em plans refine them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::BetSpec;
use crate::cards::Shoe;

pub const BETS: &[BetSpec] = &[
    BetSpec {
        id: "ante",
        summary: "the opening bet, paid by the player's final hand",
        outcomes: &[
            "royal_flush",
            "straight_flush",
            "four_of_a_kind",
            "full_house",
            "flush",
            "straight",
            "three_of_a_kind",
            "two_pair",
            "pair_or_less",
            "push",
        ],
    },
    BetSpec {
        id: "call",
        summary: "the call, twice the Ante (\"2x Hrát\" / \"Dorovnat\")",
        outcomes: &["win", "push"],
    },
];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CasinoHoldemRules {
    pub shoe: Shoe,
    pub clause: String,
}

impl CasinoHoldemRules {
    pub fn lint(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}
