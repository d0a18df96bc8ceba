//! Single-zero roulette (Evolution, SYNOT, Absolute live gaming).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::BetSpec;

pub const BETS: &[BetSpec] = &[
    BetSpec {
        id: "straight",
        summary: "one number (Straight-Up)",
        outcomes: &["win"],
    },
    BetSpec {
        id: "split",
        summary: "two adjacent numbers",
        outcomes: &["win"],
    },
    BetSpec {
        id: "street",
        summary: "three numbers of a row, or 0-1-2 / 0-2-3",
        outcomes: &["win"],
    },
    BetSpec {
        id: "corner",
        summary: "four numbers meeting at a corner, or 0-1-2-3",
        outcomes: &["win"],
    },
    BetSpec {
        id: "line",
        summary: "six numbers of two adjacent rows",
        outcomes: &["win"],
    },
    BetSpec {
        id: "dozen",
        summary: "1-12, 13-24 or 25-36",
        outcomes: &["win"],
    },
    BetSpec {
        id: "column",
        summary: "one of the three columns of twelve",
        outcomes: &["win"],
    },
    BetSpec {
        id: "red_black",
        summary: "red or black (0 loses)",
        outcomes: &["win"],
    },
    BetSpec {
        id: "even_odd",
        summary: "even or odd (0 loses)",
        outcomes: &["win"],
    },
    BetSpec {
        id: "low_high",
        summary: "1-18 or 19-36 (0 loses)",
        outcomes: &["win"],
    },
];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RouletteRules {
    /// Pockets on the wheel: 37 for single zero.
    pub pockets: u8,
    pub valid_spin: ValidSpin,
    /// Racetrack "Neighbours": how many neighbours on each side may be chosen (0–9).
    pub neighbours_max: u8,
    /// The announced (racetrack) bets and the component bets each one places.
    #[serde(default)]
    pub announced: Vec<AnnouncedBet>,
    pub clause: String,
}

/// "Pravidlo platného roztočení rulety".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValidSpin {
    /// The ball must be thrown against the wheel's rotation.
    pub ball_against_rotation: bool,
    /// Full revolutions the ball must make before it settles.
    pub min_ball_revolutions: u8,
    /// What an invalid spin leads to.
    pub on_invalid: InvalidSpin,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InvalidSpin {
    /// The dealer spins again; the invalid spin is not a result.
    Respin,
}

/// An announced bet such as Tier: a fixed set of component bets, each of one unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnnouncedBet {
    pub id: String,
    pub label: String,
    pub components: Vec<Component>,
    pub clause: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Component {
    /// A bet type id (`straight`, `split`, `street`, `corner`, …).
    pub bet: String,
    pub numbers: Vec<u8>,
    /// Units placed on this component (Voisins places two on 0-2-3 and on 25-26-28-29).
    #[serde(default = "one")]
    pub units: u8,
}

fn one() -> u8 {
    1
}

impl RouletteRules {
    pub fn lint(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if self.pockets != 37 {
            out.push((
                "rules.roulette.pockets".into(),
                format!(
                    "only single-zero wheels (37 pockets) are supported, not {}",
                    self.pockets
                ),
            ));
        }
        if self.neighbours_max > 18 {
            out.push((
                "rules.roulette.neighbours_max".into(),
                "a wheel of 37 has at most 18 neighbours on each side".into(),
            ));
        }
        for a in &self.announced {
            for (i, c) in a.components.iter().enumerate() {
                if c.numbers.iter().any(|&n| n > 36) {
                    out.push((
                        format!("rules.roulette.announced[{}].components[{i}].numbers", a.id),
                        "numbers must be 0–36".into(),
                    ));
                }
                if c.units == 0 {
                    out.push((
                        format!("rules.roulette.announced[{}].components[{i}].units", a.id),
                        "units must be at least 1".into(),
                    ));
                }
            }
        }
        out
    }
}
