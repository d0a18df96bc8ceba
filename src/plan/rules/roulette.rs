//! Single-zero roulette (Evolution, SYNOT Interactive, Absolute live gaming).
//!
//! Two halves: the plan parameters ([`RouletteRules`]), and the pure geometry of the wheel
//! and the betting layout ([`is_valid_layout`], [`covered_numbers`], [`neighbours`],
//! [`complete_bet_components`]). Lint checks every announced bet against the geometry, and
//! the roulette engine settles bets with the same functions, so a plan that lints is a plan
//! the engine can play.
//!
//! The layout is the document's "virtuální hrací plátno": 0 at the head, then twelve rows of
//! three (1-2-3, 4-5-6, …, 34-35-36); column 1 is 1, 4, …, 34, column 3 is 3, 6, …, 36.

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::BetSpec;

pub const BETS: &[BetSpec] = &[
    BetSpec {
        id: "straight",
        summary: "one number 0–36 (\"Jedno číslo\", Straight-Up)",
        outcomes: &["win"],
    },
    BetSpec {
        id: "split",
        summary: "two adjacent numbers, including 0-1, 0-2, 0-3 (\"Dvě čísla\")",
        outcomes: &["win"],
    },
    BetSpec {
        id: "street",
        summary: "three numbers of a row, or 0-1-2 / 0-2-3 (\"Tři čísla\")",
        outcomes: &["win"],
    },
    BetSpec {
        id: "corner",
        summary: "four numbers meeting at a corner, or 0-1-2-3 (\"Čtyři čísla\")",
        outcomes: &["win"],
    },
    BetSpec {
        id: "line",
        summary: "six numbers of two adjacent rows (\"Šest čísel\", six line)",
        outcomes: &["win"],
    },
    BetSpec {
        id: "dozen",
        summary: "1-12, 13-24 or 25-36 (\"12 čísel\"; 0 loses)",
        outcomes: &["win"],
    },
    BetSpec {
        id: "column",
        summary: "one of the three columns of twelve (\"Sloupce 12 čísel\"; 0 loses)",
        outcomes: &["win"],
    },
    BetSpec {
        id: "red_black",
        summary: "red or black (\"Barva\"; 0 loses)",
        outcomes: &["win"],
    },
    BetSpec {
        id: "even_odd",
        summary: "even or odd (\"Sudá/Lichá\"; 0 loses)",
        outcomes: &["win"],
    },
    BetSpec {
        id: "low_high",
        summary: "1-18 or 19-36 (\"Nízká/Vysoká\"; 0 loses)",
        outcomes: &["win"],
    },
];

/// The inside bets ("Vnitřní sázka"): placed on numbers of the layout, in the order a complete
/// bet and the payout table list them.
pub const INSIDE_BETS: [&str; 5] = ["straight", "split", "street", "corner", "line"];

/// The red numbers of the single-zero layout ("Čísla od 1 do 36 mají střídavě červenou a
/// černou barvu. 0 má zelenou barvu."); every other number from 1 to 36 is black.
pub const RED: [u8; 18] = [
    1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36,
];

/// The single-zero wheel, clockwise from 0: the order of the racetrack ("čísla za sebou tak,
/// jak jsou zobrazeny na kole rulety").
pub const WHEEL_ORDER: [u8; 37] = [
    0, 32, 15, 19, 4, 21, 2, 25, 17, 34, 6, 27, 13, 36, 11, 30, 8, 23, 10, 5, 24, 16, 33, 1, 20,
    14, 31, 9, 22, 18, 29, 7, 28, 12, 35, 3, 26,
];

/// Highest number on the wheel.
pub const MAX_NUMBER: u8 = 36;

/// Neighbours on each side that cover the whole wheel (18 + 1 + 18 = 37).
pub const NEIGHBOURS_MAX_EACH_SIDE: u8 = 18;

pub fn is_red(number: u8) -> bool {
    RED.contains(&number)
}

pub fn is_inside(bet: &str) -> bool {
    INSIDE_BETS.contains(&bet)
}

/// Row (0..=11, row 0 is 1-2-3) and column (0..=2, column 0 is 1, 4, …, 34) of 1–36.
fn cell(number: u8) -> Option<(u8, u8)> {
    (1..=MAX_NUMBER)
        .contains(&number)
        .then(|| ((number - 1) / 3, (number - 1) % 3))
}

/// The numbers sorted, or `None` when one is above 36 or one is given twice.
fn distinct_sorted(numbers: &[u8]) -> Option<Vec<u8>> {
    let set: BTreeSet<u8> = numbers.iter().copied().collect();
    (set.len() == numbers.len() && set.iter().all(|&n| n <= MAX_NUMBER))
        .then(|| set.into_iter().collect())
}

/// Whether `numbers` (in any order) are a valid placement of the inside bet `bet`:
///
/// - `straight`: one number 0–36;
/// - `split`: two numbers side by side in a row or one above the other in a column, or 0
///   with 1, 2 or 3 (0 borders the whole first row);
/// - `street`: a row n, n+1, n+2 (n = 1, 4, …, 34), or 0-1-2 or 0-2-3 ("Jako sázky Street
///   platí také sázky na skupiny 0,1,2 nebo 0,2,3");
/// - `corner`: four numbers meeting at a corner, or 0-1-2-3 ("Sázkou Corner můžete rovněž
///   uzavřít na skupinu čísel 0, 1, 2, 3");
/// - `line`: two adjacent rows, six numbers n…n+5 (n = 1, 4, …, 31).
///
/// Outside bets are not placed on numbers but on a field (see [`OutsideField`]): for them,
/// and for any unknown bet id, this is `false`.
pub fn is_valid_layout(bet: &str, numbers: &[u8]) -> bool {
    let Some(n) = distinct_sorted(numbers) else {
        return false;
    };
    match (bet, n.as_slice()) {
        ("straight", [_]) => true,
        ("split", [0, b]) => (1..=3).contains(b),
        ("split", &[a, b]) => match (cell(a), cell(b)) {
            (Some((ra, ca)), Some((rb, cb))) => {
                (ra == rb && ca + 1 == cb) || (ca == cb && ra + 1 == rb)
            }
            _ => false,
        },
        ("street", [0, 1, 2] | [0, 2, 3]) => true,
        ("street", &[a, b, c]) => a % 3 == 1 && b == a + 1 && c == a + 2,
        ("corner", [0, 1, 2, 3]) => true,
        ("corner", &[a, b, c, d]) => {
            // The corner's lowest number is in column 1 or 2 of a row that has a row above it.
            matches!(cell(a), Some((row, col)) if col < 2 && row < 11)
                && (b, c, d) == (a + 1, a + 3, a + 4)
        }
        ("line", &[a, ..]) if n.len() == 6 => {
            a % 3 == 1 && a <= 31 && n.iter().zip(a..).all(|(&x, y)| x == y)
        }
        _ => false,
    }
}

/// A field of the layout on which an outside bet ("Vnější sázky") is placed. Its name is the
/// selector of the bet: which dozen, which column, which colour, parity or half.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum OutsideField {
    /// "1st 12": 1–12.
    #[serde(rename = "dozen_1")]
    Dozen1,
    /// "2nd 12": 13–24.
    #[serde(rename = "dozen_2")]
    Dozen2,
    /// "3rd 12": 25–36.
    #[serde(rename = "dozen_3")]
    Dozen3,
    /// "2 to 1" under 1, 4, …, 34.
    #[serde(rename = "column_1")]
    Column1,
    /// "2 to 1" under 2, 5, …, 35 (the document's "prostřední sloupec", middle column).
    #[serde(rename = "column_2")]
    Column2,
    /// "2 to 1" under 3, 6, …, 36.
    #[serde(rename = "column_3")]
    Column3,
    /// "červené pole".
    Red,
    /// "černé pole".
    Black,
    /// "Even" ("sudá čísla"); 0 is not even for this bet.
    Even,
    /// "Odd" ("lichá čísla").
    Odd,
    /// "1-18".
    Low,
    /// "19-36".
    High,
}

impl OutsideField {
    pub const ALL: [OutsideField; 12] = [
        OutsideField::Dozen1,
        OutsideField::Dozen2,
        OutsideField::Dozen3,
        OutsideField::Column1,
        OutsideField::Column2,
        OutsideField::Column3,
        OutsideField::Red,
        OutsideField::Black,
        OutsideField::Even,
        OutsideField::Odd,
        OutsideField::Low,
        OutsideField::High,
    ];

    /// The field's name as written in JSON (`dozen_1`, `red`, …).
    pub fn as_str(self) -> &'static str {
        use OutsideField::*;
        match self {
            Dozen1 => "dozen_1",
            Dozen2 => "dozen_2",
            Dozen3 => "dozen_3",
            Column1 => "column_1",
            Column2 => "column_2",
            Column3 => "column_3",
            Red => "red",
            Black => "black",
            Even => "even",
            Odd => "odd",
            Low => "low",
            High => "high",
        }
    }

    /// The bet type placed on this field.
    pub fn bet(self) -> &'static str {
        use OutsideField::*;
        match self {
            Dozen1 | Dozen2 | Dozen3 => "dozen",
            Column1 | Column2 | Column3 => "column",
            Red | Black => "red_black",
            Even | Odd => "even_odd",
            Low | High => "low_high",
        }
    }

    /// Whether `number` wins a bet on this field. 0 wins no outside bet ("pokud kulička
    /// přistane na 0, sázky … prohrávají").
    pub fn covers(self, number: u8) -> bool {
        use OutsideField::*;
        if !(1..=MAX_NUMBER).contains(&number) {
            return false;
        }
        match self {
            Dozen1 => number <= 12,
            Dozen2 => (13..=24).contains(&number),
            Dozen3 => number >= 25,
            Column1 => number % 3 == 1,
            Column2 => number % 3 == 2,
            Column3 => number.is_multiple_of(3),
            Red => is_red(number),
            Black => !is_red(number),
            Even => number.is_multiple_of(2),
            Odd => number % 2 == 1,
            Low => number <= 18,
            High => number >= 19,
        }
    }
}

/// Where a bet lies on the layout: the numbers of an inside bet, or the field of an outside
/// bet. In JSON an array of numbers (`[17, 20]`) or a field name (`"dozen_2"`).
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(untagged)]
pub enum Spot {
    Numbers(Vec<u8>),
    Field(OutsideField),
}

/// The winning numbers of bet type `bet` placed on `spot`, ascending; `None` when the
/// placement is not valid (numbers that are not a `bet` on the layout, a field of another
/// bet type, an unknown bet id).
pub fn covered_numbers(bet: &str, spot: &Spot) -> Option<Vec<u8>> {
    match spot {
        Spot::Numbers(numbers) => {
            if is_valid_layout(bet, numbers) {
                distinct_sorted(numbers)
            } else {
                None
            }
        }
        Spot::Field(field) => {
            (field.bet() == bet).then(|| (1..=MAX_NUMBER).filter(|&n| field.covers(n)).collect())
        }
    }
}

/// Every valid placement of the inside bet `bet`, each ascending, in layout order (zero
/// placements first); empty for any other id.
pub fn inside_placements(bet: &str) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    match bet {
        "straight" => out.extend((0..=MAX_NUMBER).map(|n| vec![n])),
        "split" => {
            out.extend((1..=3).map(|n| vec![0, n]));
            for n in 1..=MAX_NUMBER {
                if n % 3 != 0 {
                    out.push(vec![n, n + 1]);
                }
                if n + 3 <= MAX_NUMBER {
                    out.push(vec![n, n + 3]);
                }
            }
        }
        "street" => {
            out.push(vec![0, 1, 2]);
            out.push(vec![0, 2, 3]);
            out.extend((1..=34).step_by(3).map(|n| vec![n, n + 1, n + 2]));
        }
        "corner" => {
            out.push(vec![0, 1, 2, 3]);
            for n in 1..=32u8 {
                if n % 3 != 0 {
                    out.push(vec![n, n + 1, n + 3, n + 4]);
                }
            }
        }
        "line" => out.extend((1..=31).step_by(3).map(|n| (n..n + 6).collect())),
        _ => {}
    }
    out
}

/// The racetrack Neighbours bet: `number` and `each_side` numbers on either side of it on the
/// wheel, in wheel order (clockwise), e.g. `neighbours(0, 1)` is `[26, 0, 32]`. The document:
/// "Při zvolení 1 sousedícího čísla bude provedena sázka na zvolené číslo a další 1 sousedící
/// číslo zprava a 1 sousedící číslo zleva, tedy celkově na 3 čísla."
///
/// `each_side` above 18 is taken as 18 (the whole wheel, each number once); a `number` that is
/// not on the wheel has no neighbours (empty). The engine first checks `each_side` against
/// the plan's [`Neighbours`] range.
pub fn neighbours(number: u8, each_side: u8) -> Vec<u8> {
    let Some(at) = WHEEL_ORDER.iter().position(|&n| n == number) else {
        return Vec::new();
    };
    let k = usize::from(each_side.min(NEIGHBOURS_MAX_EACH_SIDE));
    let len = WHEEL_ORDER.len();
    (0..=2 * k)
        .map(|i| WHEEL_ORDER[(at + len - k + i) % len])
        .collect()
}

/// The component bets of a complete bet ("kompletní sázka") on `number`: every placement of
/// every inside bet type listed in `units` that includes the number, each with that type's
/// units. Empty when `number` is not on the wheel.
pub fn complete_bet_components(number: u8, units: &BTreeMap<String, u8>) -> Vec<Component> {
    if number > MAX_NUMBER {
        return Vec::new();
    }
    INSIDE_BETS
        .iter()
        .filter_map(|bet| units.get(*bet).map(|&u| (*bet, u)))
        .flat_map(|(bet, u)| {
            inside_placements(bet)
                .into_iter()
                .filter(|p| p.contains(&number))
                .map(move |numbers| Component {
                    bet: bet.to_string(),
                    numbers,
                    units: u,
                })
        })
        .collect()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RouletteRules {
    /// Pockets on the wheel: 37 for single zero ("rozděleno na 37 obarvených a očíslovaných
    /// dílů").
    pub pockets: u8,
    pub valid_spin: ValidSpin,
    /// The racetrack Neighbours bet ("funkce Neighbours"), when the studio offers it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub neighbours: Option<Neighbours>,
    /// The announced (racetrack) bets and the component bets each one places
    /// ("speciální sady čísel": Tier, Orphelins, Voisins, Zero).
    #[serde(default)]
    pub announced: Vec<AnnouncedBet>,
    /// The complete-bet mode ("režim kompletních sázek", Absolute live gaming), when offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complete_bet: Option<CompleteBet>,
    /// How a bet made of component bets (announced, Neighbours, complete) is held to the
    /// limits table, which has rows only for the simple bet types.
    pub composite_limits: CompositeLimits,
    pub clause: String,
}

/// "Pravidlo platného roztočení rulety".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValidSpin {
    /// The ball must be thrown against the wheel's rotation ("vhodí kuličku proti směru
    /// otáčení kola").
    pub ball_against_rotation: bool,
    /// Full revolutions the ball must make before it settles ("alespoň třikrát oběhnout celý
    /// obvod").
    pub min_ball_revolutions: u8,
    /// What an invalid spin leads to.
    pub on_invalid: InvalidSpin,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InvalidSpin {
    /// The dealer spins again; the invalid spin is not a result ("provede krupiér opakované
    /// roztočení").
    Respin,
}

/// The racetrack Neighbours bet: a straight bet of the chosen stake on a number and on
/// `n` numbers on each side of it on the wheel (see [`neighbours`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Neighbours {
    /// Fewest neighbours on each side a player may choose ("od 0 do 9": 0 is the number alone).
    pub min_each_side: u8,
    /// Most neighbours on each side a player may choose (9: "celková sázka na 19 čísel").
    pub max_each_side: u8,
    pub clause: String,
}

/// An announced bet such as Tier: a fixed set of component bets, each of one or more units of
/// the chosen stake ("vsazeny následující sázky s aktuálně nastavenou výší sázky").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnnouncedBet {
    pub id: String,
    pub label: String,
    pub components: Vec<Component>,
    pub clause: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Component {
    /// An inside bet type id (`straight`, `split`, `street`, `corner`, `line`).
    pub bet: String,
    /// The numbers it is placed on: a valid layout of `bet` (see [`is_valid_layout`]).
    pub numbers: Vec<u8>,
    /// Units placed on this component (Voisins places two on 0-2-3 and on 25-26-28-29).
    #[serde(default = "one")]
    pub units: u8,
}

fn one() -> u8 {
    1
}

/// "Režim kompletních sázek": one click on a number places every inside bet that includes it
/// ("Tento režim pokrývá všechny vnitřní sázky pro dané číslo (straight, split 2 žetony,
/// street 3 žetony, corner 4 žetony, six line 6 žetonů zahrnujících dané číslo)"). The
/// components follow from the layout (see [`complete_bet_components`]); the plan gives the
/// units per placement of each inside bet type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompleteBet {
    /// Units (chips of the chosen value) on each placement of each inside bet type, keyed by
    /// bet type id: every inside bet type must be listed.
    pub units: BTreeMap<String, u8>,
    /// Whether complete bets may be placed on several numbers in one round ("kompletní sázky
    /// na jedno i více čísel").
    pub several_numbers: bool,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CompositeLimits {
    /// Each component is a bet of its own type and must lie within that type's row of the
    /// limits table ("Sázka se provede … podle limitů konkrétního typu sázky").
    EachComponent,
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
        if self.valid_spin.min_ball_revolutions == 0 {
            out.push((
                "rules.roulette.valid_spin.min_ball_revolutions".into(),
                "a valid spin needs at least one full revolution of the ball".into(),
            ));
        }
        if let Some(n) = &self.neighbours {
            if n.max_each_side > NEIGHBOURS_MAX_EACH_SIDE {
                out.push((
                    "rules.roulette.neighbours.max_each_side".into(),
                    format!(
                        "a wheel of 37 has at most {NEIGHBOURS_MAX_EACH_SIDE} neighbours on each side, not {}",
                        n.max_each_side
                    ),
                ));
            }
            if n.min_each_side > n.max_each_side {
                out.push((
                    "rules.roulette.neighbours.min_each_side".into(),
                    format!(
                        "the fewest neighbours ({}) exceeds the most ({})",
                        n.min_each_side, n.max_each_side
                    ),
                ));
            }
        }
        let mut ids = BTreeSet::new();
        for a in &self.announced {
            let at = format!("rules.roulette.announced[{}]", a.id);
            if a.id.trim().is_empty() {
                out.push((
                    "rules.roulette.announced".into(),
                    "an announced bet needs an id".into(),
                ));
            } else if !ids.insert(a.id.as_str()) {
                out.push((at.clone(), "announced bet declared twice".into()));
            }
            if a.components.is_empty() {
                out.push((
                    format!("{at}.components"),
                    "an announced bet places at least one component bet".into(),
                ));
            }
            for (i, c) in a.components.iter().enumerate() {
                let cp = format!("{at}.components[{i}]");
                if !is_inside(&c.bet) {
                    out.push((
                        format!("{cp}.bet"),
                        format!(
                            "'{}' is not an inside bet ({}): components are placed on numbers",
                            c.bet,
                            INSIDE_BETS.join(", ")
                        ),
                    ));
                } else if !is_valid_layout(&c.bet, &c.numbers) {
                    out.push((
                        format!("{cp}.numbers"),
                        format!(
                            "{:?} is not a {} on the single-zero layout",
                            c.numbers, c.bet
                        ),
                    ));
                }
                if c.units == 0 {
                    out.push((format!("{cp}.units"), "units must be at least 1".into()));
                }
                let same_spot = |d: &Component| {
                    d.bet == c.bet && distinct_sorted(&d.numbers) == distinct_sorted(&c.numbers)
                };
                if a.components[..i].iter().any(same_spot) {
                    out.push((
                        cp,
                        "the same bet is listed twice: give it once with its units".into(),
                    ));
                }
            }
        }
        if let Some(cb) = &self.complete_bet {
            let at = "rules.roulette.complete_bet.units";
            for (bet, &u) in &cb.units {
                if !is_inside(bet) {
                    out.push((
                        format!("{at}.{bet}"),
                        format!("'{bet}' is not an inside bet ({})", INSIDE_BETS.join(", ")),
                    ));
                }
                if u == 0 {
                    out.push((format!("{at}.{bet}"), "units must be at least 1".into()));
                }
            }
            for bet in INSIDE_BETS {
                if !cb.units.contains_key(bet) {
                    out.push((
                        at.into(),
                        format!("a complete bet covers every inside bet on the number: units for {bet} are missing"),
                    ));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `k`-subset of 0..=36, ascending.
    fn subsets(k: usize) -> Vec<Vec<u8>> {
        fn go(from: u8, k: usize, cur: &mut Vec<u8>, out: &mut Vec<Vec<u8>>) {
            if cur.len() == k {
                out.push(cur.clone());
                return;
            }
            for n in from..=MAX_NUMBER {
                cur.push(n);
                go(n + 1, k, cur, out);
                cur.pop();
            }
        }
        let mut out = Vec::new();
        go(0, k, &mut Vec::new(), &mut out);
        out
    }

    fn valid_count(bet: &str, k: usize) -> usize {
        subsets(k)
            .iter()
            .filter(|s| is_valid_layout(bet, s))
            .count()
    }

    fn rules() -> RouletteRules {
        RouletteRules {
            pockets: 37,
            valid_spin: ValidSpin {
                ball_against_rotation: true,
                min_ball_revolutions: 3,
                on_invalid: InvalidSpin::Respin,
                clause: "c".into(),
            },
            neighbours: Some(Neighbours {
                min_each_side: 0,
                max_each_side: 9,
                clause: "c".into(),
            }),
            announced: vec![AnnouncedBet {
                id: "zero".into(),
                label: "Zero".into(),
                components: vec![
                    Component {
                        bet: "split".into(),
                        numbers: vec![0, 3],
                        units: 1,
                    },
                    Component {
                        bet: "straight".into(),
                        numbers: vec![26],
                        units: 1,
                    },
                ],
                clause: "c".into(),
            }],
            complete_bet: Some(CompleteBet {
                units: [
                    ("straight", 1),
                    ("split", 2),
                    ("street", 3),
                    ("corner", 4),
                    ("line", 6),
                ]
                .into_iter()
                .map(|(b, u)| (b.to_string(), u))
                .collect(),
                several_numbers: true,
                clause: "c".into(),
            }),
            composite_limits: CompositeLimits::EachComponent,
            clause: "c".into(),
        }
    }

    fn paths(r: &RouletteRules) -> Vec<String> {
        r.lint().into_iter().map(|(p, _)| p).collect()
    }

    #[test]
    fn straight_is_any_one_number_from_0_to_36() {
        assert_eq!(valid_count("straight", 1), 37);
        assert!(!is_valid_layout("straight", &[37]));
        assert!(!is_valid_layout("straight", &[]));
    }

    /// 12 rows × 2 side-by-side pairs = 24, 3 columns × 11 pairs one above the other = 33,
    /// and 0 with each of 1, 2, 3 = 3: 60 splits.
    #[test]
    fn there_are_60_splits_including_0_1_0_2_0_3() {
        assert_eq!(valid_count("split", 2), 60);
        for zero_split in [[0, 1], [0, 2], [0, 3], [3, 0]] {
            assert!(is_valid_layout("split", &zero_split), "{zero_split:?}");
        }
        // 3-4 follow each other but 3 ends a row and 4 starts the next: not adjacent.
        assert!(!is_valid_layout("split", &[3, 4]));
        assert!(!is_valid_layout("split", &[0, 4]));
        assert!(!is_valid_layout("split", &[17, 17]));
        assert!(is_valid_layout("split", &[20, 17]));
    }

    /// 12 rows + 0-1-2 + 0-2-3 = 14 streets.
    #[test]
    fn there_are_14_streets_rows_and_the_two_zero_streets() {
        assert_eq!(valid_count("street", 3), 14);
        assert!(is_valid_layout("street", &[13, 14, 15]));
        assert!(is_valid_layout("street", &[2, 0, 1]));
        assert!(!is_valid_layout("street", &[0, 1, 3]));
        assert!(!is_valid_layout("street", &[2, 3, 4]));
    }

    /// 11 pairs of adjacent rows × 2 corners each = 22, plus 0-1-2-3: 23 corners.
    #[test]
    fn there_are_23_corners_including_0_1_2_3() {
        assert_eq!(valid_count("corner", 4), 23);
        assert!(is_valid_layout("corner", &[17, 18, 20, 21]));
        assert!(is_valid_layout("corner", &[3, 1, 0, 2]));
        assert!(!is_valid_layout("corner", &[3, 4, 6, 7]));
        assert!(!is_valid_layout("corner", &[33, 34, 36, 37]));
    }

    /// 12 rows give 11 pairs of adjacent rows: 11 lines. Six numbers of two adjacent rows
    /// are six consecutive numbers, so checking every run of six consecutive numbers (and the
    /// constructive list) covers every candidate.
    #[test]
    fn there_are_11_lines_of_two_adjacent_rows() {
        let runs: Vec<Vec<u8>> = (0..=31u8).map(|a| (a..a + 6).collect()).collect();
        let valid: Vec<&Vec<u8>> = runs.iter().filter(|r| is_valid_layout("line", r)).collect();
        assert_eq!(valid.len(), 11);
        assert_eq!(valid[0], &vec![1, 2, 3, 4, 5, 6]);
        assert_eq!(valid[10], &vec![31, 32, 33, 34, 35, 36]);
        assert!(!is_valid_layout("line", &[19, 20, 21, 22, 23, 25]));
        assert!(!is_valid_layout("line", &[0, 1, 2, 3, 4, 5]));
    }

    #[test]
    fn inside_placements_are_exactly_the_valid_layouts() {
        for (bet, k, count) in [
            ("straight", 1, 37),
            ("split", 2, 60),
            ("street", 3, 14),
            ("corner", 4, 23),
        ] {
            let listed: BTreeSet<Vec<u8>> = inside_placements(bet).into_iter().collect();
            let valid: BTreeSet<Vec<u8>> = subsets(k)
                .into_iter()
                .filter(|s| is_valid_layout(bet, s))
                .collect();
            assert_eq!(listed, valid, "{bet}");
            assert_eq!(listed.len(), count, "{bet}");
        }
        let lines = inside_placements("line");
        assert_eq!(lines.len(), 11);
        assert!(lines.iter().all(|l| is_valid_layout("line", l)));
    }

    #[test]
    fn outside_bets_are_placed_on_fields_not_numbers() {
        for bet in [
            "dozen",
            "column",
            "red_black",
            "even_odd",
            "low_high",
            "voisins",
        ] {
            assert!(!is_valid_layout(bet, &[1]), "{bet}");
        }
        assert_eq!(
            covered_numbers("dozen", &Spot::Numbers(vec![1, 2, 3])),
            None
        );
        assert_eq!(
            covered_numbers("column", &Spot::Field(OutsideField::Dozen1)),
            None
        );
    }

    #[test]
    fn outside_fields_cover_their_numbers_and_never_0() {
        let count = |f: OutsideField| {
            covered_numbers(f.bet(), &Spot::Field(f))
                .expect("a field is a valid spot of its own bet type")
                .len()
        };
        for f in OutsideField::ALL {
            assert!(!f.covers(0), "{f:?}");
            let expected = if f.bet() == "dozen" || f.bet() == "column" {
                12
            } else {
                18
            };
            assert_eq!(count(f), expected, "{f:?}");
        }
        assert_eq!(
            covered_numbers("dozen", &Spot::Field(OutsideField::Dozen2)),
            Some((13..=24).collect())
        );
        assert_eq!(
            covered_numbers("column", &Spot::Field(OutsideField::Column1)),
            Some((1..=34).step_by(3).collect())
        );
        assert_eq!(
            covered_numbers("low_high", &Spot::Field(OutsideField::High)),
            Some((19..=36).collect())
        );
        // The two fields of one bet type split 1–36 between them.
        for (a, b) in [
            (OutsideField::Red, OutsideField::Black),
            (OutsideField::Even, OutsideField::Odd),
            (OutsideField::Low, OutsideField::High),
        ] {
            assert!((1..=36).all(|n| a.covers(n) != b.covers(n)), "{a:?}/{b:?}");
        }
    }

    /// The document's worked example ("Výplatní tabulka"): 100 Kč on 0, on red and on the
    /// middle column; the result is red 14, which wins red and the middle column only.
    #[test]
    fn red_14_wins_red_and_the_middle_column_but_not_0() {
        assert!(
            covered_numbers("red_black", &Spot::Field(OutsideField::Red))
                .expect("valid")
                .contains(&14)
        );
        assert!(
            covered_numbers("column", &Spot::Field(OutsideField::Column2))
                .expect("valid")
                .contains(&14)
        );
        assert!(!covered_numbers("straight", &Spot::Numbers(vec![0]))
            .expect("valid")
            .contains(&14));
    }

    #[test]
    fn field_names_are_their_json_names() {
        for f in OutsideField::ALL {
            assert_eq!(
                serde_json::to_value(f).expect("serialises"),
                serde_json::Value::from(f.as_str())
            );
        }
    }

    #[test]
    fn spots_read_as_numbers_or_field_names() {
        let s: Spot = serde_json::from_str("[17, 20]").expect("numbers");
        assert_eq!(s, Spot::Numbers(vec![17, 20]));
        let s: Spot = serde_json::from_str("\"dozen_2\"").expect("field");
        assert_eq!(s, Spot::Field(OutsideField::Dozen2));
        assert!(serde_json::from_str::<Spot>("\"dozen_4\"").is_err());
    }

    #[test]
    fn wheel_order_holds_each_number_once_and_alternates_red_and_black() {
        let set: BTreeSet<u8> = WHEEL_ORDER.iter().copied().collect();
        assert_eq!(set, (0..=36).collect());
        assert_eq!(WHEEL_ORDER[0], 0);
        // On a single-zero wheel the colours alternate all the way round, starting with a red
        // pocket (32) clockwise after 0: an independent check of RED against WHEEL_ORDER.
        for (i, &n) in WHEEL_ORDER.iter().enumerate().skip(1) {
            assert_eq!(is_red(n), i % 2 == 1, "{n} at position {i}");
        }
        assert_eq!(RED.iter().collect::<BTreeSet<_>>().len(), 18);
    }

    #[test]
    fn neighbours_take_n_numbers_on_each_side_in_wheel_order() {
        assert_eq!(neighbours(0, 0), vec![0]);
        assert_eq!(neighbours(0, 1), vec![26, 0, 32]);
        assert_eq!(neighbours(0, 2), vec![3, 26, 0, 32, 15]);
        assert_eq!(neighbours(26, 1), vec![3, 26, 0]);
        assert_eq!(neighbours(17, 2), vec![2, 25, 17, 34, 6]);
        for number in 0..=36 {
            for k in 0..=18u8 {
                let ns = neighbours(number, k);
                assert_eq!(ns.len(), 2 * usize::from(k) + 1);
                assert_eq!(ns[usize::from(k)], number);
                assert_eq!(ns.iter().collect::<BTreeSet<_>>().len(), ns.len());
            }
        }
        // "Při zvolení 9 sousedních čísel bude celková sázka na 19 čísel."
        assert_eq!(neighbours(5, 9).len(), 19);
        assert_eq!(neighbours(5, 40).len(), 37);
        assert!(neighbours(37, 1).is_empty());
    }

    /// The classic complete bet on 17 is 40 chips: 1 straight, 4 splits × 2, 1 street × 3,
    /// 4 corners × 4, 2 lines × 6.
    #[test]
    fn complete_bet_on_17_places_40_units_on_12_bets() {
        let units = rules().complete_bet.expect("set").units;
        let c = complete_bet_components(17, &units);
        let count = |bet: &str| c.iter().filter(|x| x.bet == bet).count();
        assert_eq!(
            (
                count("straight"),
                count("split"),
                count("street"),
                count("corner"),
                count("line")
            ),
            (1, 4, 1, 4, 2)
        );
        assert_eq!(c.iter().map(|x| u32::from(x.units)).sum::<u32>(), 40);
        assert!(c
            .iter()
            .all(|x| x.numbers.contains(&17) && is_valid_layout(&x.bet, &x.numbers)));
    }

    /// On 0: straight 0, splits 0-1, 0-2, 0-3, streets 0-1-2, 0-2-3, corner 0-1-2-3; no line
    /// includes 0. 1 + 3 × 2 + 2 × 3 + 4 = 17 units.
    #[test]
    fn complete_bet_on_0_uses_the_zero_splits_streets_and_corner() {
        let units = rules().complete_bet.expect("set").units;
        let c = complete_bet_components(0, &units);
        assert_eq!(c.len(), 7);
        assert_eq!(c.iter().map(|x| u32::from(x.units)).sum::<u32>(), 17);
        assert!(complete_bet_components(37, &units).is_empty());
    }

    #[test]
    fn consistent_rules_lint_clean() {
        assert!(rules().lint().is_empty(), "{:?}", rules().lint());
    }

    #[test]
    fn only_single_zero_wheels_are_supported() {
        let mut r = rules();
        r.pockets = 38;
        assert_eq!(paths(&r), ["rules.roulette.pockets"]);
    }

    #[test]
    fn valid_spin_needs_at_least_one_revolution() {
        let mut r = rules();
        r.valid_spin.min_ball_revolutions = 0;
        assert_eq!(
            paths(&r),
            ["rules.roulette.valid_spin.min_ball_revolutions"]
        );
    }

    #[test]
    fn neighbours_range_must_fit_the_wheel_and_be_ordered() {
        let mut r = rules();
        r.neighbours.as_mut().expect("set").max_each_side = 19;
        assert_eq!(paths(&r), ["rules.roulette.neighbours.max_each_side"]);
        let mut r = rules();
        let n = r.neighbours.as_mut().expect("set");
        n.min_each_side = 5;
        n.max_each_side = 4;
        assert_eq!(paths(&r), ["rules.roulette.neighbours.min_each_side"]);
    }

    #[test]
    fn announced_components_must_be_valid_layouts() {
        let mut r = rules();
        r.announced[0].components[0].numbers = vec![0, 4];
        assert_eq!(
            paths(&r),
            ["rules.roulette.announced[zero].components[0].numbers"]
        );
        let mut r = rules();
        r.announced[0].components[1].numbers = vec![37];
        assert_eq!(
            paths(&r),
            ["rules.roulette.announced[zero].components[1].numbers"]
        );
    }

    #[test]
    fn announced_components_must_be_inside_bets() {
        let mut r = rules();
        r.announced[0].components[0].bet = "dozen".into();
        assert_eq!(
            paths(&r),
            ["rules.roulette.announced[zero].components[0].bet"]
        );
    }

    #[test]
    fn announced_components_need_at_least_one_unit() {
        let mut r = rules();
        r.announced[0].components[0].units = 0;
        assert_eq!(
            paths(&r),
            ["rules.roulette.announced[zero].components[0].units"]
        );
    }

    #[test]
    fn announced_component_listed_twice_must_be_merged_into_units() {
        let mut r = rules();
        let mut dup = r.announced[0].components[0].clone();
        dup.numbers.reverse();
        r.announced[0].components.push(dup);
        assert_eq!(paths(&r), ["rules.roulette.announced[zero].components[2]"]);
    }

    #[test]
    fn announced_bets_need_unique_ids_and_components() {
        let mut r = rules();
        r.announced.push(r.announced[0].clone());
        assert_eq!(paths(&r), ["rules.roulette.announced[zero]"]);
        let mut r = rules();
        r.announced[0].components.clear();
        assert_eq!(paths(&r), ["rules.roulette.announced[zero].components"]);
    }

    #[test]
    fn complete_bet_covers_every_inside_bet_type() {
        let mut r = rules();
        r.complete_bet.as_mut().expect("set").units.remove("line");
        assert_eq!(paths(&r), ["rules.roulette.complete_bet.units"]);
        let mut r = rules();
        let cb = r.complete_bet.as_mut().expect("set");
        cb.units.insert("dozen".into(), 2);
        cb.units.insert("split".into(), 0);
        assert_eq!(
            paths(&r),
            [
                "rules.roulette.complete_bet.units.dozen",
                "rules.roulette.complete_bet.units.split"
            ]
        );
    }
}
