//! Blackjack in all its configurations: seated (7 boxes, Bet Behind), common hand (unlimited
//! players, Infinite / All Bets / Endless), single deck with peek (001) and Czech (003).
//!
//! DRAFT vocabulary and parameters: the blackjack plans refine them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::BetSpec;
use crate::cards::Shoe;

pub const BETS: &[BetSpec] = &[
    BetSpec {
        id: "main",
        summary: "the main bet on a hand (\"Základní sázka\")",
        outcomes: &["win", "blackjack", "push", "surrender"],
    },
    BetSpec {
        id: "bet_behind",
        summary: "a bet on another player's box, following its decisions",
        outcomes: &["win", "blackjack", "push", "surrender"],
    },
    BetSpec {
        id: "split",
        summary: "the stake added by a split (\"Rozdělení\")",
        outcomes: &["win", "push"],
    },
    BetSpec {
        id: "double",
        summary: "the stake added by a double (\"Zdvojnásobení\")",
        outcomes: &["win", "push"],
    },
    BetSpec {
        id: "insurance",
        summary: "dealer has blackjack, offered on a dealer ace (\"Pojištění\")",
        outcomes: &["win"],
    },
    BetSpec {
        id: "perfect_pairs",
        summary: "the player's first two cards form a pair",
        outcomes: &["perfect_pair", "coloured_pair", "mixed_pair"],
    },
    BetSpec {
        id: "twenty_one_plus_three",
        summary: "player's two cards and the dealer's up card as a poker hand (21+3)",
        outcomes: &[
            "suited_trips",
            "straight_flush",
            "three_of_a_kind",
            "straight",
            "flush",
        ],
    },
];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BlackjackRules {
    pub shoe: Shoe,
    /// Boxes at the table; absent for a common hand with unlimited players.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seats: Option<u8>,
    pub clause: String,
}

impl BlackjackRules {
    pub fn lint(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}
