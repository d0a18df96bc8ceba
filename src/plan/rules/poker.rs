//! The C40 poker room's cash-game rules (004), for Texas Hold'em cash tables.
//!
//! DRAFT parameters: the poker plan refines them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cards::Shoe;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PokerCashRules {
    pub shoe: Shoe,
    pub small_blind: i64,
    pub big_blind: i64,
    pub min_buy_in: i64,
    pub clause: String,
}

impl PokerCashRules {
    pub fn lint(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}
