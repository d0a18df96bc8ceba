//! Top Card (Evolution): one card to Home, one to Away, the higher rank wins.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::BetSpec;
use crate::cards::Shoe;

pub const BETS: &[BetSpec] = &[
    BetSpec {
        id: "home",
        summary: "Home's card is higher (\"Domáci\")",
        outcomes: &["win", "tie"],
    },
    BetSpec {
        id: "away",
        summary: "Away's card is higher (\"Hosté\")",
        outcomes: &["win", "tie"],
    },
    BetSpec {
        id: "tie",
        summary: "both cards of equal rank (\"Remíza\")",
        outcomes: &["win"],
    },
];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TopCardRules {
    pub shoe: Shoe,
    /// Suits never decide ("Barva karty nemá na výsledek hry žádný vliv").
    pub suits_ignored: bool,
    /// A dealing error (more or fewer cards, a damaged card) voids the deal and the dealer
    /// deals again ("Pravidlo platného kola").
    pub misdeal_redeal: bool,
    pub clause: String,
}

impl TopCardRules {
    pub fn lint(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if self.shoe.decks == 0 {
            out.push((
                "rules.top_card.shoe.decks".into(),
                "a shoe holds at least one deck".into(),
            ));
        }
        out
    }
}
