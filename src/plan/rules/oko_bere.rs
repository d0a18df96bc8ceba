//! Oko bere (000): a player-banked 21 with a 32-card deck.
//!
//! DRAFT parameters: the Oko bere plan refines them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cards::Shoe;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OkoBereRules {
    pub shoe: Shoe,
    /// Smallest bank a banker may set up (minor units); the document leaves it to the table.
    pub min_bank: i64,
    /// Smallest bet (minor units).
    pub min_bet: i64,
    pub clause: String,
}

impl OkoBereRules {
    pub fn lint(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}
