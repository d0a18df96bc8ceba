//! Punto banco baccarat: Evolution Speed Baccarat and SYNOT Baccarat (002).
//!
//! The rules read as the document's sections do: the shoe, the dealing order, the naturals,
//! the third-card tables for Player ("Hráč") and Banker ("Banker" at Evolution, "Krupiér" at
//! SYNOT), then the side bets. The third-card rules are data, row for row as the document
//! tables them, so that an engine checking a live dealer's draws holds no table of its own.
//!
//! Card points are the same in every baccarat section of 002 and are not parameters: the ace
//! counts 1, 2–9 their face value, 10, J, Q and K count 0, and only the last digit of a sum
//! counts ("započítává se pouze poslední číslice výsledného součtu").

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::BetSpec;
use crate::cards::{DeckKind, Shoe};
use crate::plan::model::Plan;

pub const BETS: &[BetSpec] = &[
    BetSpec {
        id: "player",
        summary: "Player's hand ends nearer to 9 (\"Hráč\"); `tie`: the hands tie",
        outcomes: &["win", "tie"],
    },
    BetSpec {
        id: "banker",
        summary: "Banker's hand ends nearer to 9 (\"Banker\" / \"Krupiér\"); `tie`: the hands tie",
        outcomes: &["win", "tie"],
    },
    BetSpec {
        id: "tie",
        summary: "both hands end on the same total (\"Remíza\")",
        outcomes: &["win"],
    },
    BetSpec {
        id: "player_pair",
        summary: "Player's first two cards are a pair (\"Pár hráče\")",
        outcomes: &["win"],
    },
    BetSpec {
        id: "banker_pair",
        summary: "Banker's first two cards are a pair (\"Pár bankera\" / \"Pár krupiéra\")",
        outcomes: &["win"],
    },
    BetSpec {
        id: "any_pair",
        summary: "the first two cards of Player or of Banker are a pair (\"Jakýkoli pár\")",
        outcomes: &["win"],
    },
    BetSpec {
        id: "perfect_pair",
        summary: "the first two cards of Player or of Banker are a pair of the same rank and suit (\"Dokonalý pár\")",
        outcomes: &["win"],
    },
    BetSpec {
        id: "big",
        summary: "the coup uses one of the 'big' card counts, 5 or 6 cards (\"Velká hra\")",
        outcomes: &["win"],
    },
    BetSpec {
        id: "small",
        summary: "the coup uses one of the 'small' card counts, 4 cards (\"Malá hra\")",
        outcomes: &["win"],
    },
    BetSpec {
        id: "egalite_extra",
        summary: "a tie on the chosen total 0–9 (\"Egalite Extra\"); outcome `tie_N` is a tie on N when N was chosen",
        outcomes: &[
            "tie_0", "tie_1", "tie_2", "tie_3", "tie_4", "tie_5", "tie_6", "tie_7", "tie_8",
            "tie_9",
        ],
    },
    BetSpec {
        id: "player_bonus",
        summary: "Player wins with a natural or by the bonus margin or more (\"Player Bonus\")",
        outcomes: BONUS_OUTCOMES,
    },
    BetSpec {
        id: "banker_bonus",
        summary: "Banker wins with a natural or by the bonus margin or more (\"Banker Bonus\")",
        outcomes: BONUS_OUTCOMES,
    },
];

/// Outcome classes of the Player / Banker Bonus: a win with a natural, a tie of naturals, and
/// a win without a natural by `N` points (`win_by_N`).
const BONUS_OUTCOMES: &[&str] = &[
    "natural_win",
    "natural_tie",
    "win_by_1",
    "win_by_2",
    "win_by_3",
    "win_by_4",
    "win_by_5",
    "win_by_6",
    "win_by_7",
    "win_by_8",
    "win_by_9",
];

const PAIR_BETS: &[&str] = &["player_pair", "banker_pair", "any_pair", "perfect_pair"];
const BIG_SMALL_BETS: &[&str] = &["big", "small"];
const EGALITE_BETS: &[&str] = &["egalite_extra"];
const BONUS_BETS: &[&str] = &["player_bonus", "banker_bonus"];

/// A baccarat hand: "Hráč" (Player) or "Banker" / "Krupiér" (Banker).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Hand {
    Player,
    Banker,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BaccaratRules {
    /// "osm standardních balíčků karet, přičemž každý balíček obsahuje 52 karet".
    pub shoe: Shoe,
    /// Which hand each of the first four cards goes to: "první karta na pozici Hráč, druhá
    /// karta na pozici Banker, třetí karta na pozici Hráč a čtvrtá karta na pozici Banker".
    /// Third cards follow by the third-card rules, Player's before Banker's.
    pub initial_deal_order: Vec<Hand>,
    /// Two-card totals that are a natural ("Přirozená kombinace (tzv. „natural“)"). A natural
    /// in either hand ends the drawing for both hands; this takes precedence over every
    /// third-card rule ("Toto pravidlo má přednost před všemi ostatními pravidly pro třetí
    /// kartu").
    pub natural_totals: Vec<u8>,
    /// The Player table ("Hráč"): Player's two-card totals on which Player draws ("Obdrží
    /// kartu") and stands ("Stojí"). With `natural_totals` they cover 0–9 once each.
    pub player_third_card: DrawStand,
    /// Banker when Player stood: "Pokud pozice Hráč stojí, pak pozice Banker obdrží třetí
    /// kartu, pokud je jeho hodnota celkem 5 nebo méně." With `natural_totals` they cover 0–9
    /// once each.
    pub banker_when_player_stood: DrawStand,
    /// Banker when Player drew a third card: the Banker / Krupiér table, one entry per row of
    /// the document. The rows' Banker totals with `natural_totals` cover 0–9 once each.
    pub banker_when_player_drew: Vec<BankerRow>,
    /// "Páry": present when the plan offers pair bets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs: Option<PairRules>,
    /// "Velká hra" / "Malá hra": present when the plan offers them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub big_small: Option<BigSmallRules>,
    /// "Egalite Extra": present when the plan offers it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub egalite_extra: Option<EgaliteExtraRules>,
    /// "Player Bonus" / "Banker Bonus": present when the plan offers them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bonus: Option<BonusRules>,
    pub clause: String,
}

/// Two-card totals on which a hand draws a third card and on which it stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DrawStand {
    /// "Obdrží kartu".
    pub draws_on: Vec<u8>,
    /// "Stojí".
    pub stands_on: Vec<u8>,
}

/// One row of the Banker table: for these Banker two-card totals, the point values of
/// Player's third card on which Banker draws and on which Banker stands (0–9 once each).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BankerRow {
    /// "Bodová hodnota prvních dvou karet".
    pub banker_totals: Vec<u8>,
    /// "Obdrží kartu, když je hráčova třetí karta" ("Vždy obdrží kartu": all of 0–9).
    pub draws_when_player_third_is: Vec<u8>,
    /// "Stojí, když hráčova třetí karta je" ("Vždy stojí": all of 0–9).
    pub stands_when_player_third_is: Vec<u8>,
}

/// Which cards a pair bet looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PairCards {
    /// "první dvě karty rozdány na pozici Hráč a Banker".
    FirstTwo,
}

/// When two cards make a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CardMatch {
    /// Same rank (K and K; not K and Q, though both count 0).
    Rank,
    /// Same rank and the same suit: "pár stejné hodnoty i barvy (stejného symbolu)".
    RankAndSuit,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PairRules {
    pub cards: PairCards,
    /// What Player Pair, Banker Pair and Any Pair call a pair ("tvoří pár").
    pub pair_match: CardMatch,
    /// What Perfect Pair ("Dokonalý pár") calls a pair.
    pub perfect_pair_match: CardMatch,
    pub clause: String,
}

/// "Velká hra vyhrává, pokud je celkový počet karet … pět nebo šest"; "Malá hra vyhrává,
/// pokud je celkový počet karet … čtyři".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BigSmallRules {
    /// Total cards dealt to both hands on which Big wins.
    pub big_card_counts: Vec<u8>,
    /// Total cards dealt to both hands on which Small wins.
    pub small_card_counts: Vec<u8>,
    pub clause: String,
}

/// "Egalite Extra vyhrává pouze tehdy, pokud hra skončí remízou a výsledná bodová hodnota na
/// obou pozicích odpovídá zvolené hodnotě." The player picks a total; several may be bet at
/// once. Each total's payout row is `egalite_extra` / `tie_N`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EgaliteExtraRules {
    /// The totals a player may choose.
    pub totals: Vec<u8>,
    pub clause: String,
}

/// Player Bonus / Banker Bonus: "vyhrává, pokud pozice Hráč vyhraje kolo přirozenou
/// kombinací nebo rozdílem čtyř a více bodů".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BonusRules {
    /// The smallest winning margin, in points, that wins without a natural ("rozdílem čtyř a
    /// více bodů"). A win with a natural is paid as `natural_win` whatever its margin.
    pub min_margin_without_natural: u8,
    pub clause: String,
}

/// Problems with how `groups` cover `0..=max`: each value must appear in exactly one group.
fn partition(path: &str, groups: &[(&str, &[u8])], max: u8) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut seen: Vec<Vec<&str>> = vec![Vec::new(); usize::from(max) + 1];
    for (name, values) in groups {
        for &v in *values {
            match seen.get_mut(usize::from(v)) {
                Some(owners) => owners.push(name),
                None => out.push((
                    path.to_string(),
                    format!("{name} lists {v}, which is not a value 0–{max}"),
                )),
            }
        }
    }
    for (v, owners) in seen.iter().enumerate() {
        match owners.len() {
            1 => {}
            0 => out.push((
                path.to_string(),
                format!(
                    "{v} has no rule (it must be in exactly one of {})",
                    groups
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
            _ => out.push((
                path.to_string(),
                format!("{v} has more than one rule: {}", owners.join(" and ")),
            )),
        }
    }
    out
}

impl BaccaratRules {
    pub fn lint(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let p = "rules.baccarat";
        if self.shoe.decks == 0 {
            out.push((
                format!("{p}.shoe.decks"),
                "a shoe holds at least one deck".into(),
            ));
        }
        if self.shoe.deck != DeckKind::Standard52 {
            out.push((
                format!("{p}.shoe.deck"),
                "baccarat is dealt from 52-card decks".into(),
            ));
        }
        let count = |h: Hand| self.initial_deal_order.iter().filter(|&&x| x == h).count();
        if self.initial_deal_order.len() != 4
            || count(Hand::Player) != 2
            || count(Hand::Banker) != 2
        {
            out.push((
                format!("{p}.initial_deal_order"),
                "the first deal is four cards, two to Player and two to Banker".into(),
            ));
        }
        let naturals = self.natural_totals.as_slice();
        out.extend(partition(
            &format!("{p}.player_third_card"),
            &[
                ("draws_on", &self.player_third_card.draws_on),
                ("stands_on", &self.player_third_card.stands_on),
                ("natural_totals", naturals),
            ],
            9,
        ));
        out.extend(partition(
            &format!("{p}.banker_when_player_stood"),
            &[
                ("draws_on", &self.banker_when_player_stood.draws_on),
                ("stands_on", &self.banker_when_player_stood.stands_on),
                ("natural_totals", naturals),
            ],
            9,
        ));
        let mut row_groups: Vec<(String, &[u8])> = self
            .banker_when_player_drew
            .iter()
            .enumerate()
            .map(|(i, r)| (format!("row {i}"), r.banker_totals.as_slice()))
            .collect();
        row_groups.push(("natural_totals".into(), naturals));
        let named: Vec<(&str, &[u8])> = row_groups.iter().map(|(n, v)| (n.as_str(), *v)).collect();
        out.extend(partition(
            &format!("{p}.banker_when_player_drew"),
            &named,
            9,
        ));
        for (i, row) in self.banker_when_player_drew.iter().enumerate() {
            out.extend(partition(
                &format!("{p}.banker_when_player_drew[{i}]"),
                &[
                    (
                        "draws_when_player_third_is",
                        &row.draws_when_player_third_is,
                    ),
                    (
                        "stands_when_player_third_is",
                        &row.stands_when_player_third_is,
                    ),
                ],
                9,
            ));
        }
        if let Some(bs) = &self.big_small {
            let path = format!("{p}.big_small");
            for (name, counts) in [
                ("big_card_counts", &bs.big_card_counts),
                ("small_card_counts", &bs.small_card_counts),
            ] {
                if counts.is_empty() {
                    out.push((format!("{path}.{name}"), "names no card count".into()));
                }
                if let Some(c) = counts.iter().find(|c| !(4..=6).contains(*c)) {
                    out.push((
                        format!("{path}.{name}"),
                        format!("a coup uses 4, 5 or 6 cards, never {c}"),
                    ));
                }
            }
            let big: BTreeSet<_> = bs.big_card_counts.iter().collect();
            if let Some(c) = bs.small_card_counts.iter().find(|c| big.contains(c)) {
                out.push((path, format!("{c} cards would win both Big and Small")));
            }
        }
        if let Some(eg) = &self.egalite_extra {
            let path = format!("{p}.egalite_extra.totals");
            let mut seen = BTreeSet::new();
            for &t in &eg.totals {
                if t > 9 {
                    out.push((path.clone(), format!("{t} is not a baccarat total 0–9")));
                } else if !seen.insert(t) {
                    out.push((path.clone(), format!("{t} is listed twice")));
                }
            }
            if eg.totals.is_empty() {
                out.push((path, "offers no total".into()));
            }
        }
        if let Some(b) = &self.bonus {
            if !(1..=9).contains(&b.min_margin_without_natural) {
                out.push((
                    format!("{p}.bonus.min_margin_without_natural"),
                    "a winning margin is 1 to 9 points".into(),
                ));
            }
        }
        out
    }

    /// The side bets offered in `[[bets]]` and their payout rows agree with the rules.
    pub fn lint_against_plan(&self, plan: &Plan) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let p = "rules.baccarat";
        let offered = |ids: &[&str]| ids.iter().any(|id| plan.bet(id).is_some());
        for (present, ids, field) in [
            (self.pairs.is_some(), PAIR_BETS, "pairs"),
            (self.big_small.is_some(), BIG_SMALL_BETS, "big_small"),
            (self.egalite_extra.is_some(), EGALITE_BETS, "egalite_extra"),
            (self.bonus.is_some(), BONUS_BETS, "bonus"),
        ] {
            match (present, offered(ids)) {
                (true, false) => out.push((
                    format!("{p}.{field}"),
                    format!(
                        "describes side bets that the plan does not offer (none of {} in [[bets]])",
                        ids.join(", ")
                    ),
                )),
                (false, true) => out.push((
                    format!("{p}.{field}"),
                    format!(
                        "the plan offers {} but [rules.baccarat.{field}] does not describe them",
                        ids.iter()
                            .filter(|id| plan.bet(id).is_some())
                            .copied()
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )),
                _ => {}
            }
        }
        for main in ["player", "banker"] {
            if plan.bet(main).is_none() {
                out.push((
                    "bets".into(),
                    format!("baccarat needs the main bet '{main}'"),
                ));
            }
        }
        if let (Some(eg), Some(_)) = (&self.egalite_extra, plan.bet("egalite_extra")) {
            let offered: BTreeSet<String> = eg.totals.iter().map(|t| format!("tie_{t}")).collect();
            let rows: Vec<&str> = plan
                .payouts_for("egalite_extra")
                .map(|r| r.outcome.as_str())
                .collect();
            for o in &offered {
                if !rows.contains(&o.as_str()) {
                    out.push((
                        format!("{p}.egalite_extra.totals"),
                        format!(
                            "total {} is offered but has no payout row egalite_extra/{o}",
                            &o[4..]
                        ),
                    ));
                }
            }
            for r in rows {
                if !offered.contains(r) {
                    out.push((
                        format!("payouts[egalite_extra/{r}]"),
                        format!(
                            "total {} is not offered in {p}.egalite_extra.totals",
                            &r[4..]
                        ),
                    ));
                }
            }
        }
        if let Some(b) = &self.bonus {
            for bet in BONUS_BETS.iter().filter(|id| plan.bet(id).is_some()) {
                let rows: Vec<&str> = plan.payouts_for(bet).map(|r| r.outcome.as_str()).collect();
                for m in 1..=9u8 {
                    let outcome = format!("win_by_{m}");
                    let has = rows.contains(&outcome.as_str());
                    if m >= b.min_margin_without_natural && !has {
                        out.push((
                            format!("bets[{bet}]"),
                            format!(
                                "a win by {m} wins the bonus but has no payout row {bet}/{outcome}"
                            ),
                        ));
                    }
                    if m < b.min_margin_without_natural && has {
                        out.push((
                            format!("payouts[{bet}/{outcome}]"),
                            format!(
                                "a win by {m} is below {p}.bonus.min_margin_without_natural = {}",
                                b.min_margin_without_natural
                            ),
                        ));
                    }
                }
                if !rows.contains(&"natural_win") {
                    out.push((
                        format!("bets[{bet}]"),
                        format!("a win with a natural wins the bonus but has no payout row {bet}/natural_win"),
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

    /// The table of 002 (Speed Baccarat and Baccarat alike).
    fn rules() -> BaccaratRules {
        let row = |totals: &[u8], draws: &[u8], stands: &[u8]| BankerRow {
            banker_totals: totals.to_vec(),
            draws_when_player_third_is: draws.to_vec(),
            stands_when_player_third_is: stands.to_vec(),
        };
        BaccaratRules {
            shoe: Shoe::new(DeckKind::Standard52, 8),
            initial_deal_order: vec![Hand::Player, Hand::Banker, Hand::Player, Hand::Banker],
            natural_totals: vec![8, 9],
            player_third_card: DrawStand {
                draws_on: vec![0, 1, 2, 3, 4, 5],
                stands_on: vec![6, 7],
            },
            banker_when_player_stood: DrawStand {
                draws_on: vec![0, 1, 2, 3, 4, 5],
                stands_on: vec![6, 7],
            },
            banker_when_player_drew: vec![
                row(&[0, 1, 2], &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], &[]),
                row(&[3], &[0, 1, 2, 3, 4, 5, 6, 7, 9], &[8]),
                row(&[4], &[2, 3, 4, 5, 6, 7], &[0, 1, 8, 9]),
                row(&[5], &[4, 5, 6, 7], &[0, 1, 2, 3, 8, 9]),
                row(&[6], &[6, 7], &[0, 1, 2, 3, 4, 5, 8, 9]),
                row(&[7], &[], &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]),
            ],
            pairs: None,
            big_small: Some(BigSmallRules {
                big_card_counts: vec![5, 6],
                small_card_counts: vec![4],
                clause: "Velká hra; Malá hra".into(),
            }),
            egalite_extra: Some(EgaliteExtraRules {
                totals: (0..=9).collect(),
                clause: "Egalite Extra".into(),
            }),
            bonus: Some(BonusRules {
                min_margin_without_natural: 4,
                clause: "Player Bonus".into(),
            }),
            clause: "Pravidla pro třetí kartu".into(),
        }
    }

    #[test]
    fn the_documents_third_card_table_is_complete() {
        assert_eq!(rules().lint(), Vec::<(String, String)>::new());
    }

    #[test]
    fn banker_third_card_row_must_cover_every_player_third_card() {
        let mut r = rules();
        // Banker 3: the document stands only on a Player third card of 8; drop 9 from draws.
        r.banker_when_player_drew[1].draws_when_player_third_is = vec![0, 1, 2, 3, 4, 5, 6, 7];
        let found = r.lint();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, "rules.baccarat.banker_when_player_drew[1]");
        assert!(found[0].1.starts_with("9 has no rule"));
    }

    #[test]
    fn banker_third_card_row_must_not_both_draw_and_stand() {
        let mut r = rules();
        r.banker_when_player_drew[2]
            .stands_when_player_third_is
            .push(2);
        let found = r.lint();
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].1.contains("2 has more than one rule"));
    }

    #[test]
    fn every_banker_total_needs_a_row_or_a_natural() {
        let mut r = rules();
        r.banker_when_player_drew.pop(); // Banker 7 "Vždy stojí"
        let found = r.lint();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, "rules.baccarat.banker_when_player_drew");
        assert!(found[0].1.starts_with("7 has no rule"));
    }

    #[test]
    fn player_cannot_draw_on_a_natural() {
        let mut r = rules();
        r.player_third_card.draws_on.push(8);
        let found = r.lint();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, "rules.baccarat.player_third_card");
        assert!(found[0].1.contains("draws_on and natural_totals"));
    }

    #[test]
    fn banker_after_player_stood_covers_totals_zero_to_seven() {
        let mut r = rules();
        r.banker_when_player_stood.stands_on = vec![7];
        let found = r.lint();
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].1.starts_with("6 has no rule"));
    }

    #[test]
    fn third_card_values_above_nine_are_refused() {
        let mut r = rules();
        r.banker_when_player_drew[0]
            .draws_when_player_third_is
            .push(10);
        assert!(r
            .lint()
            .iter()
            .any(|(_, m)| m.contains("10, which is not a value 0–9")));
    }

    #[test]
    fn first_deal_is_two_cards_to_each_hand() {
        let mut r = rules();
        r.initial_deal_order = vec![
            Hand::Player,
            Hand::Player,
            Hand::Banker,
            Hand::Banker,
            Hand::Player,
        ];
        assert_eq!(r.lint()[0].0, "rules.baccarat.initial_deal_order");
    }

    #[test]
    fn big_and_small_card_counts_must_not_overlap() {
        let mut r = rules();
        r.big_small.as_mut().unwrap().small_card_counts = vec![4, 5];
        let found = r.lint();
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].1.contains("5 cards would win both"));
        r.big_small.as_mut().unwrap().small_card_counts = vec![3];
        assert!(r.lint()[0].1.contains("never 3"));
    }

    #[test]
    fn egalite_totals_are_zero_to_nine_once_each() {
        let mut r = rules();
        r.egalite_extra.as_mut().unwrap().totals = vec![0, 1, 1, 10];
        let found = r.lint();
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].1.contains("1 is listed twice"));
        assert!(found[1].1.contains("10 is not a baccarat total"));
    }

    fn load(text: &str) -> (Plan, BaccaratRules) {
        let plan = crate::plan::load::parse(std::path::Path::new("t.toml"), text).unwrap();
        let crate::plan::rules::GameRules::Baccarat(r) = plan.rules.clone() else {
            panic!("baccarat rules")
        };
        (plan, r)
    }

    fn synot() -> (Plan, BaccaratRules) {
        load(include_str!("../../../game_plans/synot-baccarat@1.toml"))
    }

    fn speed() -> (Plan, BaccaratRules) {
        load(include_str!(
            "../../../game_plans/evolution-speed-baccarat@1.toml"
        ))
    }

    #[test]
    fn both_plans_pass_their_own_rules() {
        for (plan, r) in [synot(), speed()] {
            assert_eq!(r.lint(), Vec::<(String, String)>::new());
            assert_eq!(r.lint_against_plan(&plan), Vec::<(String, String)>::new());
        }
    }

    #[test]
    fn side_bet_in_bets_must_be_described_in_rules() {
        let (plan, mut r) = synot();
        r.big_small = None;
        let found = r.lint_against_plan(&plan);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, "rules.baccarat.big_small");
        assert!(found[0].1.contains("offers big, small"));
    }

    #[test]
    fn side_bet_described_in_rules_must_be_offered() {
        let (mut plan, mut r) = speed();
        r.egalite_extra = Some(EgaliteExtraRules {
            totals: vec![0],
            clause: "x".into(),
        });
        plan.bets
            .retain(|b| b.id != "player_bonus" && b.id != "banker_bonus");
        let found = r.lint_against_plan(&plan);
        let paths: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            ["rules.baccarat.egalite_extra", "rules.baccarat.bonus"]
        );
    }

    #[test]
    fn every_egalite_total_has_exactly_its_payout_row() {
        let (mut plan, mut r) = synot();
        plan.payouts.retain(|p| p.outcome != "tie_4");
        r.egalite_extra.as_mut().unwrap().totals.retain(|&t| t != 9);
        let found = r.lint_against_plan(&plan);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0]
            .1
            .contains("total 4 is offered but has no payout row"));
        assert_eq!(found[1].0, "payouts[egalite_extra/tie_9]");
    }

    #[test]
    fn bonus_rows_follow_the_minimum_margin() {
        let (plan, mut r) = speed();
        r.bonus.as_mut().unwrap().min_margin_without_natural = 5;
        let found = r.lint_against_plan(&plan);
        let paths: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            [
                "payouts[player_bonus/win_by_4]",
                "payouts[banker_bonus/win_by_4]"
            ]
        );
        r.bonus.as_mut().unwrap().min_margin_without_natural = 3;
        let found = r.lint_against_plan(&plan);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0]
            .1
            .contains("a win by 3 wins the bonus but has no payout row"));
    }

    #[test]
    fn bonus_margin_is_one_to_nine_points() {
        let mut r = rules();
        r.bonus.as_mut().unwrap().min_margin_without_natural = 0;
        assert_eq!(
            r.lint()[0].0,
            "rules.baccarat.bonus.min_margin_without_natural"
        );
    }
}
