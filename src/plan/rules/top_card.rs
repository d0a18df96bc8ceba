//! Top Card (Evolution): one card to Home ("Domáci"), one to Away ("Hosté"); the higher rank
//! wins.
//!
//! What a tie does to the Home and Away bets is not a rule parameter: it is the `tie` row of
//! each bet in the payout table (a refund of part of the stake), so that the settlement and
//! the regulator's table cannot disagree.

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::BetSpec;
use crate::cards::{DeckKind, Rank, Shoe};
use crate::plan::model::Plan;

pub const BETS: &[BetSpec] = &[
    BetSpec {
        id: "home",
        summary: "Home's card is higher (\"Domáci\"); `tie`: both cards of equal rank",
        outcomes: &["win", "tie"],
    },
    BetSpec {
        id: "away",
        summary: "Away's card is higher (\"Hosté\"); `tie`: both cards of equal rank",
        outcomes: &["win", "tie"],
    },
    BetSpec {
        id: "tie",
        summary: "both cards of equal rank (\"Remíza\")",
        outcomes: &["win"],
    },
];

/// A position on the Top Card table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// "Domáci".
    Home,
    /// "Hosté".
    Away,
}

/// A card rank written as on the card: `2` … `10`, `J`, `Q`, `K`, `A`. Used where a plan
/// names ranks (an order of ranks, a qualifying pair).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RankName(pub Rank);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a rank: write 2, 3, …, 10, J, Q, K or A")]
pub struct RankNameError(String);

impl FromStr for RankName {
    type Err = RankNameError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let rank = match s {
            "10" | "T" => Rank::Ten,
            "J" => Rank::Jack,
            "Q" => Rank::Queen,
            "K" => Rank::King,
            "A" => Rank::Ace,
            _ => Rank::ALL
                .iter()
                .copied()
                .find(|r| r.number() <= 9 && s.len() == 1 && s.starts_with(r.letter()))
                .ok_or_else(|| RankNameError(s.to_string()))?,
        };
        Ok(RankName(rank))
    }
}

impl fmt::Display for RankName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Rank::Ten => f.write_str("10"),
            r => write!(f, "{}", r.letter()),
        }
    }
}

impl Serialize for RankName {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for RankName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for RankName {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RankName".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A card rank as written on the card",
            "type": "string",
            "enum": ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"],
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TopCardRules {
    /// "Hraje se s osmi balíčky karet, přičemž jeden balíček obsahuje 52 karet."
    pub shoe: Shoe,
    /// "první karta je vždy rozdána na pozici Domáci a druhá karta vždy na pozici Hosté".
    pub deal_order: Vec<Side>,
    /// Ranks from lowest to highest: "2 je nejnižší karta a hodnoty postupují vzestupně přes
    /// 3, 4, … až po A (Ace), které má nejvyšší hodnotu". Equal ranks tie.
    pub rank_order: Vec<RankName>,
    /// Suits never decide: "Barva karty nemá na výsledek hry žádný vliv".
    pub suits_ignored: bool,
    pub valid_round: ValidRound,
    pub clause: String,
}

/// "Pravidlo platného kola".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValidRound {
    /// "Výsledek hry je platný pouze v případě, že obě karty byly rozdány správně a jsou jasně
    /// viditelné na herním stole."
    pub cards_dealt_correctly_and_visible: bool,
    /// "Pokud dojde k chybě při rozdání (např. rozdání více nebo méně karet, poškozená karta
    /// apod.), hra je považována za neplatnou a krupiér vyhlásí opakované rozdání."
    pub on_misdeal: Misdeal,
    pub clause: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "TopCardMisdeal")]
pub enum Misdeal {
    /// The deal is void and the dealer deals again; bets stand for the new deal.
    Redeal,
}

impl TopCardRules {
    pub fn lint(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let p = "rules.top_card";
        if self.shoe.decks == 0 {
            out.push((
                format!("{p}.shoe.decks"),
                "a shoe holds at least one deck".into(),
            ));
        }
        if self.shoe.deck != DeckKind::Standard52 {
            out.push((
                format!("{p}.shoe.deck"),
                "Top Card is dealt from 52-card decks".into(),
            ));
        }
        if self.deal_order.len() != 2
            || !self.deal_order.contains(&Side::Home)
            || !self.deal_order.contains(&Side::Away)
        {
            out.push((
                format!("{p}.deal_order"),
                "one card to Home and one to Away".into(),
            ));
        }
        for rank in Rank::ALL {
            let n = self.rank_order.iter().filter(|r| r.0 == rank).count();
            if n != 1 {
                out.push((
                    format!("{p}.rank_order"),
                    format!(
                        "rank {} appears {n} times; every rank appears exactly once",
                        RankName(rank)
                    ),
                ));
            }
        }
        out
    }

    /// A tie never wins a Home or Away bet: its row, if any, can only give part of the stake
    /// back.
    pub fn lint_against_plan(&self, plan: &Plan) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for side in ["home", "away"] {
            if plan.bet(side).is_none() {
                out.push((
                    "bets".into(),
                    format!("Top Card needs the main bet '{side}'"),
                ));
            }
            if let Some(row) = plan
                .payouts_for(side)
                .find(|r| r.outcome == "tie" && r.ratio.is_some())
            {
                out.push((
                    format!("payouts[{side}/{}]", row.outcome),
                    "on a tie the Home and Away bets do not win: give a refund, not a ratio".into(),
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::money::Ratio;
    use crate::plan::rules::GameRules;

    fn rules() -> TopCardRules {
        TopCardRules {
            shoe: Shoe::new(DeckKind::Standard52, 8),
            deal_order: vec![Side::Home, Side::Away],
            rank_order: Rank::ALL.iter().map(|&r| RankName(r)).collect(),
            suits_ignored: true,
            valid_round: ValidRound {
                cards_dealt_correctly_and_visible: true,
                on_misdeal: Misdeal::Redeal,
                clause: "Pravidlo platného kola".into(),
            },
            clause: "Základní informace".into(),
        }
    }

    #[test]
    fn ranks_are_written_as_on_the_card() {
        for (text, rank) in [
            ("2", Rank::Two),
            ("9", Rank::Nine),
            ("10", Rank::Ten),
            ("A", Rank::Ace),
        ] {
            assert_eq!(text.parse::<RankName>().unwrap(), RankName(rank));
            assert_eq!(RankName(rank).to_string(), text);
        }
        for bad in ["1", "11", "a", "", "AA", "0"] {
            assert!(bad.parse::<RankName>().is_err(), "{bad}");
        }
    }

    #[test]
    fn two_low_ace_high_passes() {
        assert_eq!(rules().lint(), Vec::<(String, String)>::new());
    }

    #[test]
    fn rank_order_holds_every_rank_once() {
        let mut r = rules();
        r.rank_order.pop();
        r.rank_order.push(RankName(Rank::King));
        let found = r.lint();
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].1.contains("rank K appears 2 times"));
        assert!(found[1].1.contains("rank A appears 0 times"));
    }

    #[test]
    fn one_card_each_to_home_and_away() {
        let mut r = rules();
        r.deal_order = vec![Side::Home, Side::Home];
        assert_eq!(r.lint()[0].0, "rules.top_card.deal_order");
    }

    #[test]
    fn a_tie_cannot_win_the_home_bet() {
        let text = include_str!("../../../game_plans/evolution-top-card@1.toml");
        let mut plan = crate::plan::load::parse(std::path::Path::new("t.toml"), text).unwrap();
        let GameRules::TopCard(r) = plan.rules.clone() else {
            panic!("top card rules")
        };
        assert_eq!(r.lint_against_plan(&plan), Vec::<(String, String)>::new());
        let row = plan
            .payouts
            .iter_mut()
            .find(|p| p.bet == "home" && p.outcome == "tie")
            .unwrap();
        row.refund = None;
        row.ratio = Ratio::new(1, 2);
        let found = r.lint_against_plan(&plan);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, "payouts[home/tie]");
    }
}
