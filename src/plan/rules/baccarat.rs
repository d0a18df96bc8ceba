//! Punto banco baccarat: SYNOT Baccarat and Evolution Speed Baccarat.
//!
//! DRAFT vocabulary and parameters: the baccarat plans refine them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::BetSpec;
use crate::cards::Shoe;

pub const BETS: &[BetSpec] = &[
    BetSpec {
        id: "player",
        summary: "Player's hand wins (\"Hráč\")",
        outcomes: &["win", "tie"],
    },
    BetSpec {
        id: "banker",
        summary: "Banker's hand wins (\"Banker\" / \"Krupiér\")",
        outcomes: &["win", "tie"],
    },
    BetSpec {
        id: "tie",
        summary: "both hands total the same (\"Remíza\")",
        outcomes: &["win"],
    },
];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BaccaratRules {
    pub shoe: Shoe,
    pub clause: String,
}

impl BaccaratRules {
    pub fn lint(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}
